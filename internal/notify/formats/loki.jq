# Grafana Loki: streams for its push API, POST /loki/api/v1/push (https://grafana.com/docs/loki/latest/reference/loki-http-api/#ingest-logs), labelled with the object's cluster, namespace, kind and name; each line is the event's JSON.
# content-type: application/json
def labels: {service_name: "kubeevents", cluster, namespace: .object.metadata.namespace, kind: .object.kind, name: .object.metadata.name}
  | with_entries(select(.value != null and .value != ""));
{streams: group_by(labels) | map({stream: (.[0] | labels), values: map([(.time | unixnano), tojson])})}
