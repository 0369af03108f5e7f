# Flux (Kustomization, HelmRelease): a Ready condition False is a failure, with its reason and message, unless the controller is still at work (Reconciling True) or waits for a dependency; kstatus reads Ready False as InProgress.
# https://fluxcd.io/flux/components/kustomize/kustomizations/#conditions, https://fluxcd.io/flux/components/helm/helmreleases/#conditions
if .object.status.observedGeneration != null and .object.status.observedGeneration != .object.metadata.generation then null
elif any(.object.status.conditions[]?; .type == "Reconciling" and .status == "True") then null
elif any(.object.status.conditions[]?; .type == "Ready" and .status == "False" and .reason != "DependencyNotReady" and .reason != "Progressing") then
  first(.object.status.conditions[] | select(.type == "Ready")) | {status: "Failed", message: "\(.reason): \(.message)"}
else null end
