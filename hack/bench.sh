#!/usr/bin/env bash
# Benchmarks: kubeevents against kubectl and against the decode floor, on the
# real local cluster. Every target is a RATIO of clients measured side by side in the same
# run: the machine is shared, absolute times drift. See bench/README.md.
set -euo pipefail

usage() {
  cat <<USAGE
usage: hack/bench.sh COMMAND [HARNESS FLAGS...]

  e2e     (make bench)      every churn MODE in turn (default all: labels, status, mixed,
                            rollout); labels/status/mixed: N pods (default 1000), M changes
                            each (default 10), then delete all; rollout: D Deployments x R
                            replicas, ROLLOUTS rolling image updates, then delete, watched
                            with -A. kubeevents -o json, kubectl get -w, the typed and
                            dynamic floors and kubeevents with three sinks watch side by side.
                            Results: bench/results.json and a RESULT line (keys per mode).
  mem     (make bench-mem)  N realistic pods (default 10000) cached by kubeevents,
                            kubeevents --metadata-only, a plain dynamic informer and kubectl
                            get -w: RSS, initial-sync CPU, first event (from 50,000 pods
                            one client at a time). Results: bench/results-mem.json.
  short   (make test-bench) e2e of every mode with N=50 M=2 (rollout: 3 Deployments x 2
                            replicas, one update) plus the custom-resource variant, a client
                            with every speed piece off and the heavy-jq pair, and mem with 50
                            pods: checks that every client saw every event, not times.
  replay  (make bench-replay) a recording of N pods (default 1000) x M status reports (default
                            200) made by kubeevents itself (a file sink), then jq -c . and
                            kubeevents replay -o json and -o pretty on it in turn, RUNS times
                            (default 3), and replay's memory on it and on its first tenth.
                            RECORDING=PATH replays that file instead (no cluster needed).
                            Results: bench/results-replay.json.
  clean                     delete the pods and widgets of every kubeevents-bench-* namespace
                            (namespaces themselves never finish deleting: no controllers)

environment:
  MODE                      e2e: labels, status, mixed, rollout (comma-separated) or all (default)
  N, M, WORKERS             objects, changes per object, generator workers
  D, R, ROLLOUTS            e2e rollout: Deployments (100), replicas each (10), rolling updates (2)
  RUNS                      e2e: runs of each mode; ratios are their medians (default 1)
  CR=1                      e2e: also the custom-resource variant (cpu_ratio_vs_kubectl_cr)
  JQ3                       e2e: the three-sink client's jq sink (default select(.type=="DELETED") |
                            .object.metadata.name; the worst case, run on every event:
                            if .type=="DELETED" then .object.metadata.name else empty end)
  VARIANTS                  e2e: speed pieces measured A/B, one more kubeevents -o json client each
                            with the piece switched off (all, alloff, or names: fastpaths, decoders,
                            oneproc, pages, relist, bookmark, probe; NAME=VAR for another switch;
                            noby: attribution measured with over without, --no-by, by name only;
                            health: health measured with (--health) over without, by name only)
  HEAVY_JQ=1                e2e: a file sink alone and beside a CPU-heavy jq sink
  UI=1                      e2e: also the pretty stream and the full-screen view (--ui), each on a
                            pseudo-terminal: their CPU side by side (ui_cpu_ratio_vs_pretty_MODE)
  SETTLE                    mem: wait before reading RSS (default 15s)
  KUBEEVENTS_BIN            kubeevents binary to measure (default: build bin/kubeevents)
  BENCH_CONTROL_BIN         e2e, short: another kubeevents binary (the commit before a change) run
                            with -o json beside the first on the same events, client
                            kubeevents_control: cpu_ratio_vs_control_MODE, peak_rss_ratio_vs_control_MODE,
                            watch_rss_ratio_vs_control_MODE (the first binary over the control)
  BENCH_CONTROL_ENV         e2e, short: VAR=VALUE ... (space-separated) set for the control client only
USAGE
}

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
GO=${GO:-go}
cmd=${1:-}
[ $# -gt 0 ] && shift
case "$cmd" in
  e2e|mem|short|clean|replay) ;;
  -h|--help|help) usage; exit 0 ;;
  *) usage >&2; exit 2 ;;
esac

KUBECONFIG_PATH=$(hack/cluster.sh up)
KUBECTL="$(hack/cluster.sh bin)/kubectl"
mkdir -p bin/bench
"$GO" build -trimpath -o bin/bench/ ./bench/...
KUBEEVENTS=${KUBEEVENTS_BIN:-}
if [ -z "$KUBEEVENTS" ]; then
  "$GO" build -trimpath -ldflags "-s -w" -o bin/kubeevents .
  KUBEEVENTS=bin/kubeevents
fi
# Raw outputs of the last runs stay in bench/out (tens of MB each): keep the newest 3.
if [ -d bench/out ]; then
  ls -1dt bench/out/*/ 2>/dev/null | tail -n +4 | xargs -r rm -rf
fi
common=(-kubeconfig "$KUBECONFIG_PATH" -kubectl "$KUBECTL" -kubeevents "$KUBEEVENTS" -bindir bin/bench)
control=()
if [ -n "${BENCH_CONTROL_BIN:-}" ]; then control=(-control "$BENCH_CONTROL_BIN" -control-env "${BENCH_CONTROL_ENV:-}"); fi

case "$cmd" in
  e2e)
    args=(-mode "${MODE:-all}" -n "${N:-1000}" -m "${M:-10}" -workers "${WORKERS:-8}"
      -deployments "${D:-100}" -replicas "${R:-10}" -rollouts "${ROLLOUTS:-2}" -runs "${RUNS:-1}")
    if [ "${CR:-0}" = 1 ]; then args+=(-cr); fi
    if [ -n "${JQ3:-}" ]; then args+=(-jq3 "$JQ3"); fi
    if [ -n "${VARIANTS:-}" ]; then args+=(-variants "$VARIANTS"); fi
    if [ "${HEAVY_JQ:-0}" = 1 ]; then args+=(-heavy-jq); fi
    if [ "${UI:-0}" = 1 ]; then args+=(-ui); fi
    exec bin/bench/harness e2e "${common[@]}" "${args[@]}" ${control[@]+"${control[@]}"} "$@"
    ;;
  mem)
    exec bin/bench/harness mem "${common[@]}" -n "${N:-10000}" -workers "${WORKERS:-32}" -settle "${SETTLE:-15s}" \
      ${VARIANTS:+-variants "$VARIANTS"} "$@"
    ;;
  short)
    tmp=$(mktemp -d "${TMPDIR:-/tmp}/kubeevents-bench-short.XXXXXX")
    trap 'rm -rf "$tmp"' EXIT
    bin/bench/harness e2e "${common[@]}" -mode all -n 50 -m 2 -workers 4 -deployments 3 -replicas 2 -rollouts 1 \
      -cr -drain 30s -targets=false -variants alloff -heavy-jq ${control[@]+"${control[@]}"} \
      -out "$tmp/results.json" -outdir "$tmp/e2e" "$@"
    suffix=$(od -An -N3 -tx1 /dev/urandom | tr -d ' \n')
    bin/bench/harness mem "${common[@]}" -n 50 -workers 8 -settle 1s -cleanup -targets=false \
      -namespace "kubeevents-bench-mem-short-$suffix" -out "$tmp/results-mem.json" -outdir "$tmp/mem"
    echo "bench: short run OK (every client saw every event)"
    ;;
  replay)
    exec bin/bench/harness replay "${common[@]}" -n "${N:-1000}" -m "${M:-200}" -workers "${WORKERS:-8}" -runs "${RUNS:-3}" \
      ${RECORDING:+-recording "$RECORDING"} "$@"
    ;;
  clean)
    for ns in $("$KUBECTL" --kubeconfig "$KUBECONFIG_PATH" get namespaces -o name | sed -n 's|^namespace/\(kubeevents-bench-.*\)|\1|p'); do
      bin/bench/churn wipe -kubeconfig "$KUBECONFIG_PATH" -n "$ns" -workers 32
    done
    ;;
esac
