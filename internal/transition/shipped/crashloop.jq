# A container entered CrashLoopBackOff: it waits with that reason now and did not before (a pod first seen so counts).
# resolved-by: ready for 1m
.type != "DELETED" and .object.kind == "Pod" and
([.object.status | (.initContainerStatuses, .containerStatuses) | .[]? | select(.state.waiting.reason == "CrashLoopBackOff") | .name]
  - [.old.status | (.initContainerStatuses, .containerStatuses) | .[]? | select(.state.waiting.reason == "CrashLoopBackOff") | .name]
  | length > 0)
