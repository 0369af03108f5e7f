# Elasticsearch: its bulk API's NDJSON, POST /INDEX/_bulk (https://www.elastic.co/docs/api/doc/elasticsearch/operation/operation-bulk): a create action and a document per event, in Elastic Common Schema fields.
# content-type: application/x-ndjson
# max-batch: 500
.[] | {create: {}},
  ({"@timestamp": .time,
    message: (title + (detail | if . == "" then "" else ": " + . end)),
    event: {kind: "event", action: what, dataset: "kubeevents"},
    orchestrator: {type: "kubernetes", cluster: {name: .cluster}, namespace: .object.metadata.namespace, api_version: .object.apiVersion,
      resource: {type: (.object.kind | ascii_downcase), name: .object.metadata.name}},
    kubeevents: {type, on, seq}}
   | del(.. | select(. == null)) | del(.. | select(. == {})))
