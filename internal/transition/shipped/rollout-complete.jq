# A rollout completed, by kubectl rollout status's rules (Deployments, StatefulSets, DaemonSets; a Job: its Complete condition).
.type == "MODIFIED" and (.object | rollout_status.state) == "complete" and (.old | rollout_status.state) != "complete"
