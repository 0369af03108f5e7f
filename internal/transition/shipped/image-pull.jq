# A container cannot pull its image: it waits in ErrImagePull or ImagePullBackOff now and did in neither before.
# resolved-by: ready for 1m
.type != "DELETED" and .object.kind == "Pod" and
([.object.status | (.initContainerStatuses, .containerStatuses) | .[]? | select(.state.waiting.reason == "ErrImagePull" or .state.waiting.reason == "ImagePullBackOff") | .name]
  - [.old.status | (.initContainerStatuses, .containerStatuses) | .[]? | select(.state.waiting.reason == "ErrImagePull" or .state.waiting.reason == "ImagePullBackOff") | .name]
  | length > 0)
