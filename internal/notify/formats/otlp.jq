# OpenTelemetry: OTLP/HTTP JSON logs (POST /v1/logs), a record per event, with the Kubernetes resource attributes of the semantic conventions.
# Its documentation: https://opentelemetry.io/docs/specs/otlp/#otlphttp and https://opentelemetry.io/docs/specs/semconv/resource/k8s/;
# the Collector takes 20 MiB a request (max_request_body_size:
# https://github.com/open-telemetry/opentelemetry-collector/blob/main/config/confighttp/README.md).
# An episode's update or resolution is a record of its own, with the episode's id and action.
# content-type: application/json
# max-bytes: 20971520
def str($k; $v): if $v == null or $v == "" then empty else {key: $k, value: {stringValue: ($v | tostring)}} end;
def attr($kind): if $kind == null then null else {Pod: "pod", Node: "node", Deployment: "deployment", ReplicaSet: "replicaset",
  StatefulSet: "statefulset", DaemonSet: "daemonset", Job: "job", CronJob: "cronjob"}[$kind] end;
def resource:
  [str("service.name"; "kubeevents"), str("k8s.cluster.name"; .cluster),
   str("k8s.namespace.name"; if .object.kind == "Namespace" then .object.metadata.name else .object.metadata.namespace end),
   (attr(.object.kind) as $a | if $a then str("k8s.\($a).name"; .object.metadata.name), str("k8s.\($a).uid"; .object.metadata.uid) else empty end),
   (if .object.kind == "Pod" then
      str("k8s.node.name"; .object.spec.nodeName),
      (.object.metadata.ownerReferences[]? | select(.controller == true) | attr(.kind) as $a
        | if $a then str("k8s.\($a).name"; .name), str("k8s.\($a).uid"; .uid) else empty end)
    else empty end)];
{resourceLogs: map({resource: {attributes: resource},
  scopeLogs: [{scope: {name: "kubeevents"},
    logRecords: [{timeUnixNano: (.time | unixnano), observedTimeUnixNano: (.time | unixnano),
      severityNumber: (if problem then 13 else 9 end), severityText: (if problem then "WARN" else "INFO" end),
      body: {stringValue: (title + (detail | if . == "" then "" else ": " + . end) + (context_text | if . == "" then "" else "\n" + . end))},
      attributes: [str("kubeevents.type"; .type), str("kubeevents.kind"; .object.kind), str("kubeevents.resource"; .resource.resource),
        (if .on then {key: "kubeevents.on", value: {arrayValue: {values: [.on[] | {stringValue: .}]}}} else empty end),
        (if .seq then {key: "kubeevents.seq", value: {intValue: (.seq | tostring)}} else empty end),
        str("kubeevents.episode.id"; .episode.id), str("kubeevents.episode.action"; .episode.action)]}]}]})}
