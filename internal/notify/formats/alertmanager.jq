# Alertmanager: alerts for its v2 API (POST /api/v2/alerts), one per transition of each event (or per event), firing for 5 minutes.
# Its labels (alertname, severity, cluster, namespace, kind, name) route, silence and group it.
# Its documentation: https://github.com/prometheus/alertmanager/blob/main/api/v2/openapi.yaml (no size limit).
# content-type: application/json
def pair($k; $v): if $v == null or $v == "" then {} else {($k): ($v | tostring)} end;
[.[] | . as $ev | (.on // [null])[] |
  {labels: ({alertname: (. // "kubeevents_" + ($ev.type | ascii_downcase))}
     + pair("severity"; if $ev | problem then "warning" else "info" end)
     + pair("cluster"; $ev.cluster) + pair("namespace"; $ev.object.metadata.namespace)
     + pair("kind"; $ev.object.kind) + pair("name"; $ev.object.metadata.name)),
   annotations: ({summary: ($ev | title)} + pair("description"; $ev | detail)),
   startsAt: $ev.time,
   endsAt: ($ev.time | sub("\\.[0-9]+Z$"; "Z") | fromdateiso8601 + 300 | todateiso8601)}]
