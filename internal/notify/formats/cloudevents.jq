# CloudEvents: one event per request in structured mode, its data the event's envelope.
# Its documentation: https://github.com/cloudevents/spec/blob/main/cloudevents/bindings/http-protocol-binding.md and
# https://github.com/cloudevents/spec/blob/main/cloudevents/formats/json-format.md; intermediaries must forward
# events of 64 KiB, headers included (https://github.com/cloudevents/spec/blob/main/cloudevents/spec.md#size-limits):
# the body is held to 62 KiB.
# An episode's update, resolution or digest is an event of its own (type dev.kubeevents.episode.update, ...).
# content-type: application/cloudevents+json
# max-batch: 1
# max-bytes: 63488
.[] | {specversion: "1.0",
  id: ([.object.metadata.uid // .episode.action, .object.metadata.resourceVersion // .time, .type, (.seq // empty | tostring),
        (.episode.id // empty), (.episode.action // empty)] | join("/")),
  source: ("/kubeevents" + (if .cluster then "/" + (.cluster | @uri) else "" end)),
  type: ("dev.kubeevents." + (if .episode.action and .episode.action != "open" then "episode." + .episode.action
    elif .on then .on[0] else .type | ascii_downcase end)),
  time: .time, datacontenttype: "application/json", data: .}
  + (if .object then {subject: (.resource.resource + "/" + name)} else {} end)
  + (if .on then {transitions: (.on | join(","))} else {} end)
