# The pod was evicted: by its node's kubelet (status.reason Evicted) or through the Eviction API (a DisruptionTarget condition saying so).
.type != "DELETED" and .object.kind == "Pod" and
((.object.status.reason == "Evicted" and .old.status.reason != "Evicted") or
 (any(.object.status.conditions[]?; .type == "DisruptionTarget" and .status == "True" and .reason == "EvictionByEvictionAPI") and
  (any(.old.status.conditions[]?; .type == "DisruptionTarget" and .status == "True" and .reason == "EvictionByEvictionAPI") | not)))
