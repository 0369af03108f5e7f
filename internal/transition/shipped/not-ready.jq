# A pod or node stopped being Ready: its Ready condition was True and is not now (False or Unknown); a pod being deleted does not count.
# resolved-by: ready for 1m
.type == "MODIFIED" and (.object.kind == "Pod" or .object.kind == "Node") and .object.metadata.deletionTimestamp == null and
any(.old.status.conditions[]?; .type == "Ready" and .status == "True") and
(any(.object.status.conditions[]?; .type == "Ready" and .status == "True") | not)
