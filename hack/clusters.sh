#!/usr/bin/env bash
# Several local clusters at once, for watching several clusters in one stream
# (kubeevents watch --context a,b). Cluster 1 is hack/cluster.sh's own, with the caller's
# environment (KUBEEVENTS_CLUSTER_DIR, ports, mode); cluster i (2..N) is another
# hack/cluster.sh cluster beside it:
#   state directory  ${KUBEEVENTS_CLUSTER_DIR}-i
#   ports            cluster 1's + (i-1) x KUBEEVENTS_CLUSTERS_PORT_STEP (default 3000)
#   mode             KUBEEVENTS_CLUSTERS_MODE (default bare: etcd and kube-apiserver
#                    alone, which is all a watch needs and saves the CPU of the rest)
# and one kubeconfig holds a context for each: cluster-1 ... cluster-N (their admin users).
set -euo pipefail

usage() {
  cat <<USAGE
usage: hack/clusters.sh up N | down N | status N | kubeconfig N | env I

  up N          start clusters 1..N (cluster 1 as hack/cluster.sh up does) and print the
                path of a kubeconfig with the contexts cluster-1 ... cluster-N
  down N        stop clusters 2..N and cluster 1
  status N      hack/cluster.sh status of each
  kubeconfig N  print that kubeconfig's path (written by up)
  env I         print the environment of cluster I, for hack/cluster.sh (e.g.
                env \$(hack/clusters.sh env 2) hack/cluster.sh restart-apiserver 5)
  dir I         print the state directory of cluster I

environment: hack/cluster.sh's (cluster 1's), and
  KUBEEVENTS_CLUSTERS_PORT_STEP  port distance between clusters (default 3000; at least 4)
  KUBEEVENTS_CLUSTERS_MODE       mode of clusters 2..N (default bare)
USAGE
}

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CLUSTER="$ROOT/hack/cluster.sh"
CACHE_ROOT="${XDG_CACHE_HOME:-$HOME/.cache}/kubeevents"
BASE_DIR="${KUBEEVENTS_CLUSTER_DIR:-$CACHE_ROOT/cluster}"
BASE_API="${KUBEEVENTS_APISERVER_PORT:-16443}"
BASE_ETCD="${KUBEEVENTS_ETCD_PORT:-12379}"
STEP="${KUBEEVENTS_CLUSTERS_PORT_STEP:-3000}"
MODE="${KUBEEVENTS_CLUSTERS_MODE:-bare}"
MERGED="$BASE_DIR-clusters.kubeconfig"

case "$STEP" in ''|*[!0-9]*) echo "clusters: KUBEEVENTS_CLUSTERS_PORT_STEP is \"$STEP\"; give a number of ports" >&2; exit 2 ;; esac
if [ "$STEP" -lt 4 ]; then echo "clusters: KUBEEVENTS_CLUSTERS_PORT_STEP $STEP: a cluster uses 4 ports; give at least 4" >&2; exit 2; fi

# env_of I prints cluster I's environment for hack/cluster.sh, one VAR=value a line.
env_of() {
  local i=$1
  if [ "$i" -eq 1 ]; then
    echo "KUBEEVENTS_CLUSTER_DIR=$BASE_DIR"
    echo "KUBEEVENTS_APISERVER_PORT=$BASE_API"
    echo "KUBEEVENTS_ETCD_PORT=$BASE_ETCD"
    [ -n "${KUBEEVENTS_CLUSTER_MODE:-}" ] && echo "KUBEEVENTS_CLUSTER_MODE=$KUBEEVENTS_CLUSTER_MODE"
    return 0
  fi
  echo "KUBEEVENTS_CLUSTER_DIR=$BASE_DIR-$i"
  echo "KUBEEVENTS_APISERVER_PORT=$((BASE_API + (i - 1) * STEP))"
  echo "KUBEEVENTS_ETCD_PORT=$((BASE_ETCD + (i - 1) * STEP))"
  echo "KUBEEVENTS_CLUSTER_MODE=$MODE"
}

# on I CMD...: hack/cluster.sh CMD with cluster I's environment.
on() {
  local i=$1; shift
  # shellcheck disable=SC2046
  env $(env_of "$i") "$CLUSTER" "$@"
}

count() {
  case "${1:-}" in ''|*[!0-9]*) usage >&2; exit 2 ;; esac
  if [ "$1" -lt 1 ]; then usage >&2; exit 2; fi
}

# merge N writes the kubeconfig with a context cluster-I per cluster (its admin user).
merge() {
  local n=$1 kubectl tmp
  kubectl="$("$CLUSTER" bin)/kubectl"
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' RETURN
  : > "$tmp/kubeconfig"
  for i in $(seq 1 "$n"); do
    local kc server token
    kc="$(on "$i" kubeconfig)"
    server=$("$kubectl" --kubeconfig "$kc" config view --raw -o jsonpath='{.clusters[0].cluster.server}')
    "$kubectl" --kubeconfig "$kc" config view --raw -o jsonpath='{.clusters[0].cluster.certificate-authority-data}' | base64 -d > "$tmp/ca-$i.crt"
    token=$("$kubectl" --kubeconfig "$kc" config view --raw -o jsonpath='{.users[?(@.name=="admin")].user.token}')
    "$kubectl" --kubeconfig "$tmp/kubeconfig" config set-cluster "cluster-$i" --server "$server" \
      --certificate-authority "$tmp/ca-$i.crt" --embed-certs >/dev/null
    "$kubectl" --kubeconfig "$tmp/kubeconfig" config set-credentials "cluster-$i" --token "$token" >/dev/null
    "$kubectl" --kubeconfig "$tmp/kubeconfig" config set-context "cluster-$i" --cluster "cluster-$i" \
      --user "cluster-$i" --namespace default >/dev/null
  done
  "$kubectl" --kubeconfig "$tmp/kubeconfig" config use-context cluster-1 >/dev/null
  chmod 600 "$tmp/kubeconfig"
  mv "$tmp/kubeconfig" "$MERGED"
}

cmd="${1:-}"
case "$cmd" in
  up)
    count "${2:-}"
    for i in $(seq 1 "$2"); do on "$i" up >/dev/null; done
    merge "$2"
    echo "$MERGED"
    ;;
  down)
    count "${2:-}"
    status=0
    for i in $(seq "$2" -1 1); do on "$i" down || status=1; done
    rm -f "$MERGED"
    exit $status
    ;;
  status)
    count "${2:-}"
    status=0
    for i in $(seq 1 "$2"); do echo "cluster-$i:"; on "$i" status || status=1; done
    exit $status
    ;;
  kubeconfig)
    count "${2:-}"
    [ -f "$MERGED" ] || { echo "clusters: no kubeconfig yet; run hack/clusters.sh up $2" >&2; exit 1; }
    echo "$MERGED"
    ;;
  env)
    count "${2:-}"
    env_of "$2"
    ;;
  dir)
    count "${2:-}"
    env_of "$2" | sed -n 's/^KUBEEVENTS_CLUSTER_DIR=//p'
    ;;
  -h|--help|help) usage ;;
  *) usage >&2; exit 2 ;;
esac
