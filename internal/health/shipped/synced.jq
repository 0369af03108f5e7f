# Any custom resource with a Synced condition (Crossplane's managed resources, composite resources and claims): Synced False means its last reconcile failed (ReconcileError), which kstatus does not read; ReconcilePaused is on purpose, and not a failure. Ready False (Creating, Unavailable) stays kstatus's InProgress.
# https://docs.crossplane.io/latest/managed-resources/managed-resources/#conditions, https://docs.crossplane.io/latest/guides/troubleshoot-crossplane/
if any(.object.status.conditions[]?; .type == "Synced" and .status == "False" and .reason != "ReconcilePaused") then
  first(.object.status.conditions[] | select(.type == "Synced")) | {status: "Failed", message: "\(.reason): \(.message)"}
else null end
