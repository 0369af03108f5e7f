# A pod or node became Ready: its Ready condition is True now and was not before.
.type == "MODIFIED" and (.object.kind == "Pod" or .object.kind == "Node") and
any(.object.status.conditions[]?; .type == "Ready" and .status == "True") and
(any(.old.status.conditions[]?; .type == "Ready" and .status == "True") | not)
