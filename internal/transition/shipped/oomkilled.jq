# A container was OOMKilled: its last termination (or its termination) is a new one, for running out of memory.
# resolved-by: ready for 1m
.type != "DELETED" and .object.kind == "Pod" and
([.object.status | (.initContainerStatuses, .containerStatuses) | .[]? |
   if .state.terminated.reason == "OOMKilled" then [.name, .state.terminated.finishedAt]
   elif .lastState.terminated.reason == "OOMKilled" then [.name, .lastState.terminated.finishedAt]
   else empty end]
  - [.old.status | (.initContainerStatuses, .containerStatuses) | .[]? |
   if .state.terminated.reason == "OOMKilled" then [.name, .state.terminated.finishedAt]
   elif .lastState.terminated.reason == "OOMKilled" then [.name, .lastState.terminated.finishedAt]
   else empty end]
  | length > 0)
