# A rollout failed, by kubectl rollout status's rules (a Deployment past its progress deadline; a Job: its Failed condition); a workload first seen failed counts.
# resolved-by: rollout-complete
.type != "DELETED" and (.object | rollout_status.state) == "failed" and (.old | rollout_status.state) != "failed"
