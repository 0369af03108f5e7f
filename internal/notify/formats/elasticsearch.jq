# Elasticsearch: bulk API NDJSON (POST /INDEX/_bulk), a create action and a document in Elastic Common Schema fields per event.
# Its documentation: https://www.elastic.co/docs/api/doc/elasticsearch/operation/operation-bulk; a request holds 100mb
# (http.max_content_length: https://www.elastic.co/docs/reference/elasticsearch/configuration-reference/networking-settings).
# An episode's update or resolution is a document of its own, with the episode (kubeevents.episode).
# content-type: application/x-ndjson
# max-batch: 500
# max-bytes: 104857600
.[] | {create: {}},
  ({"@timestamp": .time,
    message: (title + (detail | if . == "" then "" else ": " + . end) + (context_text | if . == "" then "" else "\n" + . end)),
    event: {kind: "event", action: what, dataset: "kubeevents"},
    orchestrator: {type: "kubernetes", cluster: {name: .cluster}, namespace: .object.metadata.namespace, api_version: .object.apiVersion,
      resource: {type: (.object.kind // null | if . then ascii_downcase else . end), name: .object.metadata.name}},
    kubeevents: {type, on, seq, episode, digest, context}}
   | del(.. | select(. == null)) | del(.. | select(. == {})))
