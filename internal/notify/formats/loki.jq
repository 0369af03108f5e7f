# Grafana Loki: streams for its push API (POST /loki/api/v1/push), labelled with the object's cluster, namespace, kind and name.
# Each line is the event's JSON. Its documentation: https://grafana.com/docs/loki/latest/reference/loki-http-api/#ingest-logs
# content-type: application/json
def labels: {service_name: "kubeevents", cluster, namespace: .object.metadata.namespace, kind: .object.kind, name: .object.metadata.name}
  | with_entries(select(.value != null and .value != ""));
{streams: group_by(labels) | map({stream: (.[0] | labels), values: map([(.time | unixnano), tojson])})}
