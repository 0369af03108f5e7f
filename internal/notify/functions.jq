# Functions every format can use, given one event's envelope (kubeevents format functions prints them).

# name: the object's namespace/name, or its name when it has none.
def name: (.object.metadata.namespace // "" | if . == "" then "" else . + "/" end) + .object.metadata.name;

# what: what happened, in a word or a few: the transitions (crashloop, oomkilled), else the event type.
def what: if (.on // []) != [] then .on | join(", ") else .type | ascii_downcase end;

# problem: whether the event says something went wrong: a transition that does, a rollout that failed, or health that is Failed.
def problem: any(.on[]?; IN("crashloop", "oomkilled", "image-pull", "evicted", "failed", "not-ready", "rollout-failed", "degraded", "stalled")) or .rollout.state == "failed" or .health.status == "Failed";

# title: one line: "crashloop: Pod shop/web-7d9f8-abc12", with the cluster when several are watched; ending in " [cut]" when the event was cut to fit one request.
def title: "\(what): \(.object.kind) \(name)" + (if .cluster then " in cluster \(.cluster)" else "" end) + (if .cut then " [cut]" else "" end);

# cut($n): the string in at most $n characters: when longer, its start and "…[cut]".
def cut($n): if length <= $n then . else .[0:$n - 6] + "…[cut]" end;

# detail: the object's state in a few words: a pod's phase and containers in trouble, a node's Ready condition, a rollout's message, else its health (where the run computes it); "" otherwise.
def detail:
  if .rollout then .rollout.message
  elif .object.kind == "Pod" then
    [("phase " + (.object.status.phase // "unknown")),
     (.object.status | (.initContainerStatuses, .containerStatuses) | .[]? |
       if .state.waiting.reason then "\(.name) \(.state.waiting.reason)"
       elif .state.terminated.reason then "\(.name) terminated: \(.state.terminated.reason)"
       elif .lastState.terminated.reason then "\(.name) restarted \(.restartCount) times, last: \(.lastState.terminated.reason)"
       else empty end)] | join(", ")
  elif .object.kind == "Node" then "Ready " + (first(.object.status.conditions[]? | select(.type == "Ready") | .status) // "unknown")
  elif .health then .health.status + (if (.health.message // "") == "" then "" else ": " + .health.message end)
  else "" end;

# unixnano: an RFC 3339 time in UTC, such as .time, as nanoseconds since 1970 in a decimal string.
def unixnano: capture("^(?<s>[^.Z]+)(\\.(?<f>[0-9]+))?Z$") | ((.s + "Z" | fromdateiso8601 | tostring) + ((.f // "") + "000000000")[0:9]);
