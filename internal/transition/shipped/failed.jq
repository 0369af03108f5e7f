# The pod failed: its phase became Failed.
.type != "DELETED" and .object.kind == "Pod" and .object.status.phase == "Failed" and .old.status.phase != "Failed"
