#!/usr/bin/env bash
# make demo-rollout: kubeevents following rollouts with `watch TYPE/NAME --owned` on the
# living local cluster, in namespace "demo-rollout": a rolling update that succeeds
# (exit 0), one whose pods can never be scheduled (exit 1 at the progress deadline), the
# rollback, and a Job run to completion. Extra arguments go to every kubeevents run
# (e.g. -o json).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
KUBECONFIG_PATH=$(KUBEEVENTS_CLUSTER_MODE=living "$ROOT/hack/cluster.sh" up)
KUBECTL="$("$ROOT/hack/cluster.sh" bin)/kubectl --kubeconfig $KUBECONFIG_PATH"
NS=demo-rollout
for i in $(seq 1 90); do
  phase=$($KUBECTL get namespace $NS -o jsonpath='{.status.phase}' 2>/dev/null || true)
  [ "$phase" = Terminating ] || break
  [ "$i" = 1 ] && echo "kubeevents demo: waiting for the previous demo's namespace to be deleted…" >&2
  sleep 1
done
$KUBECTL get namespace $NS >/dev/null 2>&1 || $KUBECTL create namespace $NS >/dev/null
trap '$KUBECTL delete namespace $NS --wait=false >/dev/null 2>&1 || true' EXIT
k="$KUBECTL -n $NS"

follow() { # follow TYPE/NAME: the stream until the rollout ends, then its exit code
  local code=0
  "$ROOT/bin/kubeevents" watch "$1" --owned --with-events --until-rollout --timeout 2m --no-diff \
    -n $NS --kubeconfig "$KUBECONFIG_PATH" "${@:2}" || code=$?
  echo "── kubeevents exited with $code" >&2
}
say() { printf '\n── %s\n' "$*" >&2; }

say "A Deployment of 3 pods, created: kubeevents watch deployment/web --owned --with-events --until-rollout"
$k create -f - >/dev/null <<YAML
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 3
  progressDeadlineSeconds: 15
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      terminationGracePeriodSeconds: 3
      containers: [{name: nginx, image: "nginx:1.27"}]
YAML
follow deployment/web "$@"

say "A rolling update to nginx:1.28: a new ReplicaSet, its pods Running and Ready, the old ones terminating"
$k set image deployment/web nginx=nginx:1.28 >/dev/null
follow deployment/web "$@"

say "An update whose pods no node can take: the rollout fails at its 15 s progress deadline (exit 1)"
$k patch deployment web -p '{"spec":{"template":{"spec":{"nodeSelector":{"disk":"none-has-this"}}}}}' >/dev/null
follow deployment/web "$@"

say "kubectl rollout undo: the ReplicaSet that worked, still running, takes over at once"
$k rollout undo deployment/web >/dev/null
follow deployment/web "$@"

say "A Job run to completion: kubeevents watch job/once --owned --until-rollout"
$k create job once --image=busybox:1.36 >/dev/null
follow job/once "$@"
