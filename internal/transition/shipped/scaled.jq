# The replicas asked for changed: spec.replicas, of a Deployment, StatefulSet, ReplicaSet or any scalable resource.
.type == "MODIFIED" and .old.spec.replicas != null and .object.spec.replicas != .old.spec.replicas
