# An object's health became Failed (kstatus, or a health rule: a Deployment past its progress deadline, a failed Job, a custom resource Stalled or failing); one first seen Failed counts.
.type != "DELETED" and .health.status == "Failed" and .health.previous != "Failed"
