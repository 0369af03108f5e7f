# Jobs: InProgress while they run, then kstatus's Current (Complete) or Failed; kstatus alone calls a Job Current as soon as it started, so waiting for it would not wait for it to finish. As --until-rollout and kubectl wait --for=condition=complete read them.
# https://kubernetes.io/docs/concepts/workloads/controllers/job/#job-termination-and-cleanup
if any(.object.status.conditions[]?; (.type == "Complete" or .type == "Failed") and .status == "True") then null
else {status: "InProgress", message: "running: \(.object.status.active // 0) active, \(.object.status.succeeded // 0) succeeded, \(.object.status.failed // 0) failed"}
end
