#!/usr/bin/env bash
# Cost of watching several namespaces (-n a,b,c: one informer per namespace) against one
# all-namespaces informer that leaves the rest out (--exclude-namespace by name: the
# server filters; by glob: kubeevents decodes and drops). Small and quick, for
# bench/README.md#several-namespaces; not part of `make bench`.
#
#   hack/bench-namespaces.sh [N pods per namespace, default 200] [M patches, default 5]
#
# Four namespaces get the same churn; the watched three (a, b, c) are the same for every
# client, the fourth (d) is noise that each client must leave out. Every client runs side
# by side, --watch-only -o json to /dev/null, each from its own copy of the binary.
set -euo pipefail
N=${1:-200}
M=${2:-5}
cd "$(dirname "$0")/.."
export KUBECONFIG=${KUBECONFIG:-$(hack/cluster.sh kubeconfig)}
out=$(mktemp -d)
go build -o "$out/churn" ./bench/churn
go build -o "$out/ke" .
ns=(nsbench-a nsbench-b nsbench-c nsbench-d)
for n in "${ns[@]}"; do "$out/churn" ns -n "$n"; "$out/churn" create -n "$n" -count "$N"; done

declare -A args=(
  [several]="-n nsbench-a,nsbench-b,nsbench-c"
  [exclude_name]="-A --exclude-namespace nsbench-d"
  [exclude_glob]="-A --exclude-namespace nsbench-d*"
)
declare -A pid
for c in "${!args[@]}"; do
  cp "$out/ke" "$out/ke-$c"
  # shellcheck disable=SC2086
  "$out/ke-$c" watch pods ${args[$c]} --watch-only -o json >"$out/$c.jsonl" 2>"$out/$c.err" &
  pid[$c]=$!
done
sleep 5 # lists behind every client
cpu() { awk '{print $14+$15}' "/proc/$1/stat"; }
declare -A base
for c in "${!pid[@]}"; do base[$c]=$(cpu "${pid[$c]}"); done
for n in "${ns[@]}"; do "$out/churn" run -n "$n" -count "$N" -patches "$M" -workers 2 -record "$out/rec-$n" & done
while pgrep -f "$out/churn run" >/dev/null; do sleep 1; done
sleep 5
printf '%-14s %8s %12s\n' client events cpu_ticks
for c in several exclude_name exclude_glob; do
  ticks=$(( $(cpu "${pid[$c]}") - ${base[$c]} ))
  printf '%-14s %8s %12s\n' "$c" "$(wc -l <"$out/$c.jsonl")" "$ticks"
  kill -INT "${pid[$c]}"
done
wait 2>/dev/null || true
for n in "${ns[@]}"; do "$out/churn" wipe -n "$n" >/dev/null 2>&1 || true; done
echo "outputs in $out"
