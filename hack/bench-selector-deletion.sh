#!/usr/bin/env bash
# A mass deletion under -l: N labelled ConfigMaps, `kubeevents watch cm -l app=mass` on
# them, all deleted at once. Prints the time from the deletion's start to the last
# DELETED event kubeevents made (its "time"), and the requests it made to tell deletions
# from relabellings (-v=6's log). For bench/README.md#a-mass-deletion-under--l; not part
# of `make bench`.
#
#   hack/bench-selector-deletion.sh [BINARY, default: built from this tree] [N, default 1000]
#   MODE=kubectl hack/bench-selector-deletion.sh ...   # kubectl delete -l: one DELETE per object
#
# MODE=collection (the default) deletes with one DeleteCollection, as a namespace's
# deletion or a controller does: the server deletes as fast as it can.
set -euo pipefail
cd "$(dirname "$0")/.."
kc=${KUBECONFIG:-$(hack/cluster.sh kubeconfig)}
k="$(hack/cluster.sh bin)/kubectl --kubeconfig $kc"
dir=$(mktemp -d)
bin=${1:-}
if [ -z "$bin" ]; then
  bin=$dir/kubeevents
  go build -o "$bin" .
fi
n=${2:-1000}
ns=mass-$(head -c4 /dev/urandom | od -An -tx1 | tr -d ' \n')
$k create ns "$ns" >/dev/null
pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; $k delete ns "$ns" --wait=false >/dev/null 2>&1; rm -rf "$dir"' EXIT
for i in $(seq 1 "$n"); do printf -- '---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm-%d, labels: {app: mass}}\ndata: {a: "1"}\n' "$i"; done >"$dir/cms.yaml"
$k -n "$ns" create -f "$dir/cms.yaml" >/dev/null
"$bin" watch cm -n "$ns" -l app=mass -o json -v=6 --kubeconfig "$kc" >"$dir/out" 2>"$dir/err" &
pid=$!
count() { grep -c "\"type\":\"$1\"" "$dir/out" 2>/dev/null || true; }
until [ "$(count ADDED)" -ge "$n" ]; do sleep 0.2; done
before=$(wc -l <"$dir/err")
t0=$(date +%s.%N)
if [ "${MODE:-collection}" = collection ]; then
  $k delete --raw "/api/v1/namespaces/$ns/configmaps?labelSelector=app%3Dmass" >/dev/null
else
  $k -n "$ns" delete cm -l app=mass >/dev/null
fi
t1=$(date +%s.%N)
until [ "$(count DELETED)" -ge "$n" ]; do sleep 0.1; done
last=$(grep '"type":"DELETED"' "$dir/out" | tail -1 | sed -E 's/.*"time":"([^"]+)".*/\1/')
tl=$(date -d "$last" +%s.%N)
requests() { sed -n "$((before + 1)),\$p" "$dir/err" | grep -c "\"Response\" verb=\"GET\" url=\"[^\"]*/configmaps$1" || true; }
printf '%s n=%d: the deletion took %.1fs; the last DELETED was made %.1fs after it began; GETs %d, LIST pages %d\n' \
  "${MODE:-collection}" "$n" "$(echo "$t1 - $t0" | bc)" "$(echo "$tl - $t0" | bc)" "$(requests /)" "$(requests '?limit')"
