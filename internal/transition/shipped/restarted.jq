# A container restarted: its restart count grew.
.type == "MODIFIED" and .object.kind == "Pod" and
([.object.status | (.initContainerStatuses, .containerStatuses) | .[]? | [.name, .restartCount]]
  - [.old.status | (.initContainerStatuses, .containerStatuses) | .[]? | [.name, .restartCount]]
  | any(.[]; .[1] > 0))
