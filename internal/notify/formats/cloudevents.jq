# CloudEvents: one event per request in structured mode, its data the event's envelope.
# Its documentation: https://github.com/cloudevents/spec/blob/main/cloudevents/bindings/http-protocol-binding.md and
# https://github.com/cloudevents/spec/blob/main/cloudevents/formats/json-format.md; intermediaries must forward
# events of 64 KiB, headers included (https://github.com/cloudevents/spec/blob/main/cloudevents/spec.md#size-limits):
# the body is held to 62 KiB.
# content-type: application/cloudevents+json
# max-batch: 1
# max-bytes: 63488
.[] | {specversion: "1.0",
  id: ([.object.metadata.uid, .object.metadata.resourceVersion, .type, (.seq // empty | tostring)] | join("/")),
  source: ("/kubeevents" + (if .cluster then "/" + (.cluster | @uri) else "" end)),
  type: ("dev.kubeevents." + (if .on then .on[0] else .type | ascii_downcase end)),
  subject: (.resource.resource + "/" + name),
  time: .time, datacontenttype: "application/json", data: .}
  + (if .on then {transitions: (.on | join(","))} else {} end)
