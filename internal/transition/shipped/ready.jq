# A pod or node became Ready: its Ready condition is True now and was not before; any other object became Current (its health: kstatus or a health rule).
.type == "MODIFIED" and
if .object.kind == "Pod" or .object.kind == "Node" then
  any(.object.status.conditions[]?; .type == "Ready" and .status == "True") and
  (any(.old.status.conditions[]?; .type == "Ready" and .status == "True") | not)
else
  .health.status == "Current" and .health.previous != null and .health.previous != "Current"
end
