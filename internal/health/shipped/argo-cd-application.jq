# Argo CD Application: status.health.status (Healthy, Progressing, Degraded, Suspended, Missing, Unknown), with the sync status; a sync running is InProgress.
# https://argo-cd.readthedocs.io/en/stable/operator-manual/health/
if .object.status.operationState.phase == "Running" then
  {status: "InProgress", message: ("syncing" + (if .object.status.operationState.message then ": " + .object.status.operationState.message else "" end))}
elif .object.status.health.status == "Healthy" then
  {status: "Current", message: "Healthy, \(.object.status.sync.status // "sync status unknown")"}
elif .object.status.health.status == "Degraded" then
  {status: "Failed", message: ("Degraded" + (if .object.status.health.message then ": " + .object.status.health.message else "" end))}
elif .object.status.health.status == "Progressing" or .object.status.health.status == "Suspended" or .object.status.health.status == "Missing" then
  {status: "InProgress", message: (.object.status.health.status + (if .object.status.health.message then ": " + .object.status.health.message else "" end))}
elif .object.status.health.status == "Unknown" then
  {status: "Unknown", message: (.object.status.health.message // "Argo CD says its health is Unknown")}
else null end
