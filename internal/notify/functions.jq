# Functions every format can use, given one event's envelope (kubeevents format functions prints them).

# name: the object's namespace/name, or its name when it has none ("" for a digest, which has no object).
def name: if .object then (.object.metadata.namespace // "" | if . == "" then "" else . + "/" end) + .object.metadata.name else "" end;

# clock: an RFC 3339 time in UTC, such as .time, as "15:04:05 UTC".
def clock: sub("\\.[0-9]+Z$"; "Z") | fromdateiso8601 | strftime("%H:%M:%S UTC");

# what: what happened, in a word or a few: the transitions (crashloop, oomkilled), else the event type; for an episode's update, its transition "goes on"; for its resolution, "resolved" and its transition.
def what:
  if .episode.action == "resolve" then "resolved " + .episode.transition
  elif .episode.action == "update" then .episode.transition + " goes on"
  elif (.on // []) != [] then .on | join(", ") else .type | ascii_downcase end;

# problem: whether the event says something went wrong: a transition that does, a rollout that failed, or health that is Failed; an episode's resolution does not.
def problem: .episode.action != "resolve" and (any(.on[]?; IN("crashloop", "oomkilled", "image-pull", "evicted", "failed", "not-ready", "rollout-failed", "degraded", "stalled")) or .rollout.state == "failed" or .health.status == "Failed");

# resolved: whether the event resolves an episode.
def resolved: .episode.action == "resolve";

# times: a count as words: "once", "14 times".
def times: if . == 1 then "once" else "\(.) times" end;

# episode_note: what an episode's update or resolution adds, naming the first message it follows: "14 times since 15:01:03 UTC, 6 since the last message; first alerted 15:01:03 UTC"; "" for other events.
def episode_note:
  .episode as $e |
  if $e.action == "update" then "\($e.count | times) since \($e.opened | clock), \($e.since) since the last message; first alerted \($e.opened | clock)"
  elif $e.action == "resolve" then "by \($e.resolvedBy) at \($e.resolved | clock), after \($e.count | times) since \($e.opened | clock); first alerted \($e.opened | clock)"
  else "" end;

# title: one line: "crashloop: Pod shop/web-7d9f8-abc12", with the cluster when several are watched, an episode's note in parentheses, and " [cut]" when the event was cut to fit one request; a digest's: "digest: 2 open episodes".
def title:
  (if .type == "DIGEST" then "digest: \(.digest | length) open episode\(if (.digest | length) == 1 then "" else "s" end)"
   else "\(what): \(.object.kind) \(name)" + (if .cluster then " in cluster \(.cluster)" else "" end)
     + (episode_note | if . == "" then "" else " (\(.))" end) end)
  + (if .cut then " [cut]" else "" end);

# cut($n): the string in at most $n characters: when longer, its start and "…[cut]".
def cut($n): if length <= $n then . else .[0:$n - 6] + "…[cut]" end;

# tail($n): the string in at most $n characters: when longer, "[cut]…" and its end (a log's last lines are what matter).
def tail($n): if length <= $n then . else "[cut]…" + .[length - $n + 6:] end;

# episode_line: one episode of a digest in a line: "crashloop: Deployment shop/web, 14 times since 15:01:03 UTC (6 since the last message)".
def episode_line:
  "\(.transition): \(.controller.kind // "") \(if .namespace then .namespace + "/" else "" end)\(.controller.name // ""), \(.count | times) since \(.opened | clock) (\(.since) since the last message)";

# detail: the object's state in a few words: a pod's phase and containers in trouble, a node's Ready condition, a rollout's message, else its health (where the run computes it); a digest's episodes, a line each; "" otherwise.
def detail:
  if .type == "DIGEST" then [.digest[] | episode_line] | join("\n")
  elif .rollout then .rollout.message
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

# printable: the string with its control characters (the terminal escapes a log line may hold) each replaced by U+FFFD; tabs and line ends kept.
def printable: gsub("[\\x00-\\x08\\x0b-\\x1f\\x7f]"; "\ufffd");

# context_text: the crash's context as lines of text: how the container ended, its last log lines, the pod's Warning Events; "" without one. A log cut to fit a request starts with "[cut]…".
def context_text:
  if .context then .context as $c |
    [ (if $c.lastTermination then $c.lastTermination as $t |
         "\($c.container) exited \($t.exitCode)" + (if $t.signal then " (signal \($t.signal))" else "" end)
         + (if $t.reason then " (\($t.reason))" else "" end) + (if $t.message then ": \($t.message)" else "" end)
       elif $c.waiting then "\($c.container) waits: \($c.waiting.reason)" + (if $c.waiting.message then ": \($c.waiting.message)" else "" end)
       else empty end),
      (if $c.log then "log of the \(if $c.log.previous then "previous" else "current" end) instance" + (if $c.log.cut then " (cut)" else "" end) + ":", ($c.log.lines[] | "  " + .)
       elif $c.logError then "no log: \($c.logError)" else empty end),
      ($c.warnings[]? | "Warning \(.reason)" + (if .count > 1 then " (\(.count) times)" else "" end) + ": \(.message)"),
      (if $c.warningsError then "no Warning Events: \($c.warningsError)" else empty end) ] | join("\n")
  | printable else "" end;

# unixnano: an RFC 3339 time in UTC, such as .time, as nanoseconds since 1970 in a decimal string.
def unixnano: capture("^(?<s>[^.Z]+)(\\.(?<f>[0-9]+))?Z$") | ((.s + "Z" | fromdateiso8601 | tostring) + ((.f // "") + "000000000")[0:9]);
