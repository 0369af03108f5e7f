#!/usr/bin/env bash
# make demo: a local cluster, a little churn in namespace "demo", and kubeevents watching it.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
KUBECONFIG_PATH=$("$ROOT/hack/cluster.sh" up)
KUBECTL="$("$ROOT/hack/cluster.sh" bin)/kubectl --kubeconfig $KUBECONFIG_PATH"
NS=demo
$KUBECTL get namespace $NS >/dev/null 2>&1 || $KUBECTL create namespace $NS >/dev/null

churn() {
  local i=0
  while sleep 2; do
    i=$((i + 1))
    $KUBECTL -n $NS run "web-$i" --image=nginx:1.27 --labels=app=web --restart=Never >/dev/null 2>&1 || true
    $KUBECTL -n $NS create configmap "settings-$i" --from-literal=round=$i >/dev/null 2>&1 || true
    sleep 2
    $KUBECTL -n $NS label pod "web-$i" tier=frontend --overwrite >/dev/null 2>&1 || true
    $KUBECTL -n $NS annotate pod "web-$i" demo/round="$i" --overwrite >/dev/null 2>&1 || true
    if [ $i -gt 2 ]; then
      $KUBECTL -n $NS delete pod "web-$((i - 2))" --wait=false >/dev/null 2>&1 || true
      $KUBECTL -n $NS delete configmap "settings-$((i - 2))" >/dev/null 2>&1 || true
    fi
  done
}
churn &
CHURN=$!
trap 'kill $CHURN 2>/dev/null || true' EXIT
echo "kubeevents: watching pods in namespace $NS of the local cluster (kubeconfig $KUBECONFIG_PATH); Ctrl-C to stop" >&2
"$ROOT/bin/kubeevents" watch pods -n $NS --kubeconfig "$KUBECONFIG_PATH" "$@"
