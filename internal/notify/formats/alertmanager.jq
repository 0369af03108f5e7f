# Alertmanager: alerts for its v2 API (POST /api/v2/alerts), one per transition of each event (or per event), firing for 5 minutes.
# Its labels (alertname, severity, cluster, namespace, kind, name) route, silence and group it.
# An episode is one alert: its labels name its transition and the object at the top of its controller chain, the same in
# each of its messages (its update refreshes it, a digest refreshes every open one); it fires until the episode would be
# resolved as quiet, and its resolution ends it (endsAt).
# Its documentation: https://github.com/prometheus/alertmanager/blob/main/api/v2/openapi.yaml (no size limit).
# content-type: application/json
def pair($k; $v): if $v == null or $v == "" then {} else {($k): ($v | tostring)} end;
def plus5m: sub("\\.[0-9]+Z$"; "Z") | fromdateiso8601 + 300 | todateiso8601;
def episode_alert($e; $ev):
  {labels: ({alertname: $e.transition, severity: "warning"} + pair("cluster"; $e.cluster) + pair("namespace"; $e.namespace)
     + pair("kind"; $e.controller.kind) + pair("name"; $e.controller.name)),
   annotations: ({summary: (if $ev then $ev | title else "\($e.transition): \($e | episode_line)" end)}
     + pair("description"; if $ev then $ev | detail else "" end) + pair("context"; if $ev then $ev | context_text | tail(4000) else "" end)),
   startsAt: $e.opened,
   endsAt: ($e.resolved // $e.expires // ($ev.time | plus5m))};
[.[] | . as $ev |
  if .type == "DIGEST" then .digest[] | episode_alert(.; null)
  elif .episode.id then episode_alert(.episode; $ev)
  else (.on // [null])[] |
  {labels: ({alertname: (. // "kubeevents_" + ($ev.type | ascii_downcase))}
     + pair("severity"; if $ev | problem then "warning" else "info" end)
     + pair("cluster"; $ev.cluster) + pair("namespace"; $ev.object.metadata.namespace)
     + pair("kind"; $ev.object.kind) + pair("name"; $ev.object.metadata.name)),
   annotations: ({summary: ($ev | title)} + pair("description"; $ev | detail) + pair("context"; $ev | context_text | tail(4000))),
   startsAt: $ev.time,
   endsAt: ($ev.time | plus5m)} end]
