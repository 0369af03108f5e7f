# Grafana Loki: streams for its push API (POST /loki/api/v1/push), labelled with the object's cluster, namespace, kind and name.
# Each line is the event's JSON. Its documentation: https://grafana.com/docs/loki/latest/reference/loki-http-api/#ingest-logs;
# a line longer than 256KB is refused (max_line_size: https://grafana.com/docs/loki/latest/configure/#limits_config),
# which a push of at most that holds.
# An episode's update or resolution is a line of its own, with the episode in the event's JSON.
# content-type: application/json
# max-bytes: 256000
def labels: {service_name: "kubeevents", cluster, namespace: .object.metadata.namespace, kind: .object.kind, name: .object.metadata.name}
  | with_entries(select(.value != null and .value != ""));
{streams: group_by(labels) | map({stream: (.[0] | labels), values: map([(.time | unixnano), tojson])})}
