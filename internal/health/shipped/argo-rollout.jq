# Argo Rollouts: status.phase (Healthy, Progressing, Paused, Degraded) and status.message, once the controller has observed the spec (status.observedGeneration, a string, against metadata.generation); kstatus cannot read the string and gives Unknown.
# https://argo-rollouts.readthedocs.io/en/stable/features/specification/ (status), and Argo CD's health check of Rollouts (resource_customizations/argoproj.io/Rollout/health.lua)
if (.object.status.observedGeneration | tostring) != (.object.metadata.generation | tostring) then
  {status: "InProgress", message: "waiting for the rollout controller to observe generation \(.object.metadata.generation)"}
elif .object.status.phase == "Healthy" then
  {status: "Current", message: (.object.status.message // "Rollout is healthy")}
elif .object.status.phase == "Degraded" then
  {status: "Failed", message: (.object.status.message // "Rollout is degraded")}
elif .object.status.phase == "Paused" then
  {status: "InProgress", message: ("paused" + (if .object.status.message then ": " + .object.status.message else "" end))}
elif .object.status.phase == "Progressing" then
  {status: "InProgress", message: (.object.status.message // "Rollout is progressing")}
else null end
