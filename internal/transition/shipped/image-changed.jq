# A container's image changed: in a pod's spec, a workload's pod template or a CronJob's job template.
.type == "MODIFIED" and
([.object.spec | (.template.spec, .jobTemplate.spec.template.spec, .) | (.initContainers, .containers) | .[]? | [.name, .image]]
  != [.old.spec | (.template.spec, .jobTemplate.spec.template.spec, .) | (.initContainers, .containers) | .[]? | [.name, .image]])
