#!/usr/bin/env bash
# make demo: a living local cluster, a Deployment that is created, scaled and rolled out
# again and again in namespace "demo", a pod that keeps crashing and restarting, and
# kubeevents watching the Deployments and the pods (-o wide: their nodes too).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
KUBECONFIG_PATH=$(KUBEEVENTS_CLUSTER_MODE=living "$ROOT/hack/cluster.sh" up)
KUBECTL="$("$ROOT/hack/cluster.sh" bin)/kubectl --kubeconfig $KUBECONFIG_PATH"
NS=demo
# A namespace left terminating by an earlier demo is gone in a moment: wait for it.
for i in $(seq 1 90); do
  phase=$($KUBECTL get namespace $NS -o jsonpath='{.status.phase}' 2>/dev/null || true)
  [ "$phase" = Terminating ] || break
  [ "$i" = 1 ] && echo "kubeevents demo: waiting for the previous demo's namespace to be deleted…" >&2
  sleep 1
done
$KUBECTL get namespace $NS >/dev/null 2>&1 || $KUBECTL create namespace $NS >/dev/null
# Start from an empty namespace, so the story below begins at its first line.
$KUBECTL -n $NS delete deployment,pod --all --wait=true >/dev/null 2>&1 || true

story() {
  local k="$KUBECTL -n $NS" round=0
  sleep 2
  # Like kubectl create deployment web --image=nginx:1.27 --replicas=3, with a grace
  # period short enough to watch old pods go within a few seconds of a rollout.
  $k apply -f - >/dev/null <<YAML
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, labels: {app: web}}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      terminationGracePeriodSeconds: 5
      containers: [{name: nginx, image: "nginx:1.27"}]
YAML
  sleep 6
  $k scale deployment web --replicas=5 >/dev/null
  sleep 6
  # A pod whose container keeps crashing (a kwok stage of hack/kwok/stages.yaml).
  $k run flaky --image=busybox:1.36 --labels=app=flaky,sim.kubeevents.dev/behavior=crashloop >/dev/null
  while sleep 8; do
    round=$((round + 1))
    # A rolling update: a new ReplicaSet, its pods created, Running, Ready; old ones
    # terminating and deleted.
    $k set image deployment/web "nginx=nginx:1.$((27 + round % 2))" >/dev/null
    sleep 12
    if [ $((round % 2)) = 0 ]; then $k scale deployment web --replicas=5 >/dev/null
    else $k scale deployment web --replicas=3 >/dev/null; fi
  done
}
story >/dev/null 2>&1 &
STORY=$!
# On the way out, leave the cluster quiet for what runs next (make test): the namespace
# controller deletes the Deployment and the restarting pod with the namespace.
trap 'kill $STORY 2>/dev/null || true; $KUBECTL delete namespace $NS --wait=false >/dev/null 2>&1 || true' EXIT
echo "kubeevents: watching deployments and pods in namespace $NS of the local cluster (kubeconfig $KUBECONFIG_PATH); Ctrl-C to stop" >&2
"$ROOT/bin/kubeevents" watch deployments,pods -n $NS -o wide --kubeconfig "$KUBECONFIG_PATH" "$@"
