#!/usr/bin/env bash
# A real, local Kubernetes control plane for demos, end-to-end tests and benchmarks:
# etcd + kube-apiserver built from Go modules (hack/tools/go.mod), listening on 127.0.0.1.
# No scheduler, controllers or kubelet: pods stay Pending, namespaces never finish
# terminating, nothing is garbage-collected. Tests use fresh, uniquely named namespaces.
set -euo pipefail

usage() {
  cat <<USAGE
usage: hack/cluster.sh COMMAND

  up                        build (cached) and start etcd + kube-apiserver; print the kubeconfig path
  down                      stop the processes 'up' started (by PID) and remove the cluster state
  status                    say whether the cluster is running and healthy (exit 1 if not)
  kubeconfig                print the kubeconfig path
  bin                       print the directory holding kube-apiserver, etcd and kubectl (builds them)
  build                     build the binaries into the cache, start nothing
  restart-apiserver [SECS]  SIGKILL kube-apiserver, wait SECS (default 10), start it again on the same etcd
  compact                   compact etcd to its current revision (forces 410 Gone on old watches)

environment:
  KUBEEVENTS_CLUSTER_DIR    state directory (default \${XDG_CACHE_HOME:-\$HOME/.cache}/kubeevents/cluster)
  KUBEEVENTS_APISERVER_PORT kube-apiserver port on 127.0.0.1 (default 16443)
  KUBEEVENTS_ETCD_PORT      etcd client port on 127.0.0.1 (default 12379; peer port is +1)
  (once 'up' has run, the state directory remembers both ports: later commands given only
  KUBEEVENTS_CLUSTER_DIR use them, and restart-apiserver and compact refuse other ports)
USAGE
}

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TOOLS_DIR="$ROOT/hack/tools"
KUBE_VERSION=v1.37.1
ETCD_VERSION=v3.7.0
KWOK_VERSION=v0.8.0
BINARIES="etcd kubectl kube-apiserver kube-controller-manager kube-scheduler kwok"
CACHE_ROOT="${XDG_CACHE_HOME:-$HOME/.cache}/kubeevents"
GO_VERSION=$(go env GOVERSION 2>/dev/null || echo unknown)
BIN_DIR="$CACHE_ROOT/bin/kube-${KUBE_VERSION}_etcd-${ETCD_VERSION}_kwok-${KWOK_VERSION}_${GO_VERSION}"
STATE="${KUBEEVENTS_CLUSTER_DIR:-$CACHE_ROOT/cluster}"
API_PORT="${KUBEEVENTS_APISERVER_PORT:-16443}"
ETCD_PORT="${KUBEEVENTS_ETCD_PORT:-12379}"
ETCD_PEER_PORT=$((ETCD_PORT + 1))
KUBECONFIG_PATH="$STATE/kubeconfig"
# A cluster records the ports it was started with in its state directory. Later commands
# given only KUBEEVENTS_CLUSTER_DIR use them, and restart-apiserver and compact refuse to
# act on ports other than the recorded ones: a second cluster (e.g. the fault tests' own)
# must never restart or compact another cluster's processes by a forgotten variable.
PORTS_FILE="$STATE/ports"
if [ -f "$PORTS_FILE" ]; then
  read -r REC_API_PORT REC_ETCD_PORT < "$PORTS_FILE" || true
  if [ -z "${KUBEEVENTS_APISERVER_PORT:-}" ] && [ -n "${REC_API_PORT:-}" ]; then API_PORT=$REC_API_PORT; fi
  if [ -z "${KUBEEVENTS_ETCD_PORT:-}" ] && [ -n "${REC_ETCD_PORT:-}" ]; then
    ETCD_PORT=$REC_ETCD_PORT; ETCD_PEER_PORT=$((ETCD_PORT + 1))
  fi
fi

log() { printf 'cluster: %s\n' "$*" >&2; }
die() { printf 'cluster: %s\n' "$*" >&2; exit 1; }

# same_cluster dies unless this state directory's recorded ports are the ones in use.
same_cluster() {
  [ -f "$PORTS_FILE" ] || return 0
  if [ "${REC_API_PORT:-}" != "$API_PORT" ] || [ "${REC_ETCD_PORT:-}" != "$ETCD_PORT" ]; then
    die "$STATE was started with kube-apiserver port ${REC_API_PORT:-?} and etcd port ${REC_ETCD_PORT:-?}, not $API_PORT and $ETCD_PORT; unset or fix KUBEEVENTS_APISERVER_PORT and KUBEEVENTS_ETCD_PORT"
  fi
}

# build compiles the three binaries once per version; later calls reuse the cache.
build() {
  local b missing=
  for b in $BINARIES; do [ -x "$BIN_DIR/$b" ] || missing=1; done
  [ -z "$missing" ] && return 0
  # One build at a time per cache (two make targets, or two clusters, may start together):
  # the second waits for the first and then finds everything built.
  mkdir -p "$CACHE_ROOT"
  exec 8>"$CACHE_ROOT/build.lock"
  flock 8
  missing=
  for b in $BINARIES; do [ -x "$BIN_DIR/$b" ] || missing=1; done
  [ -z "$missing" ] && { exec 8>&-; return 0; }
  command -v go >/dev/null || die "go is not on PATH; install Go 1.26 first"
  mkdir -p "$BIN_DIR.tmp"
  local major=${KUBE_VERSION#v}; major=${major%%.*}
  local minor=${KUBE_VERSION#v*.}; minor=${minor%%.*}
  local date; date=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  local ld="-s -w"
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ld+=" -X $pkg.gitVersion=$KUBE_VERSION -X $pkg.gitMajor=$major -X $pkg.gitMinor=$minor"
    ld+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=$date"
  done
  local t0=$SECONDS
  (
    cd "$TOOLS_DIR"
    export CGO_ENABLED=0 GOFLAGS=-mod=mod
    [ -x "$BIN_DIR.tmp/etcd" ] || { log "building etcd $ETCD_VERSION (about 1 minute, once)"; \
      go build -trimpath -ldflags "-s -w" -o "$BIN_DIR.tmp/etcd" go.etcd.io/etcd/server/v3; }
    [ -x "$BIN_DIR.tmp/kubectl" ] || { log "building kubectl $KUBE_VERSION (about 2 minutes, once)"; \
      go build -trimpath -ldflags "$ld" -o "$BIN_DIR.tmp/kubectl" k8s.io/kubernetes/cmd/kubectl; }
    [ -x "$BIN_DIR.tmp/kube-apiserver" ] || { log "building kube-apiserver $KUBE_VERSION (about 6 minutes on 2 cores, once)"; \
      go build -trimpath -ldflags "$ld" -o "$BIN_DIR.tmp/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver; }
    [ -x "$BIN_DIR.tmp/kube-controller-manager" ] || { log "building kube-controller-manager $KUBE_VERSION (about 3 minutes, once)"; \
      go build -trimpath -ldflags "$ld" -o "$BIN_DIR.tmp/kube-controller-manager" k8s.io/kubernetes/cmd/kube-controller-manager; }
    [ -x "$BIN_DIR.tmp/kube-scheduler" ] || { log "building kube-scheduler $KUBE_VERSION (about 1 minute, once)"; \
      go build -trimpath -ldflags "$ld" -o "$BIN_DIR.tmp/kube-scheduler" k8s.io/kubernetes/cmd/kube-scheduler; }
  ) || die "build failed (see above); rerun 'hack/cluster.sh build' to resume"
  # kwok is a module of its own with its own dependency versions: go install builds it
  # from its published go.mod, apart from hack/tools.
  [ -x "$BIN_DIR.tmp/kwok" ] || { log "building kwok $KWOK_VERSION (about 2 minutes, once)"; \
    (cd "$TOOLS_DIR" && CGO_ENABLED=0 GOFLAGS= GOBIN="$BIN_DIR.tmp" go install -trimpath -ldflags "-s -w" "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION"); } \
    || die "building kwok failed (see above); rerun 'hack/cluster.sh build' to resume"
  rm -rf "$BIN_DIR" && mv "$BIN_DIR.tmp" "$BIN_DIR"
  log "built in $((SECONDS - t0))s into $BIN_DIR"
  exec 8>&-
}

pid_alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

healthy() {
  [ -f "$STATE/certs/apiserver.crt" ] || return 1
  curl -sf --max-time 2 --cacert "$STATE/certs/apiserver.crt" \
    -H "Authorization: Bearer $(cat "$STATE/admin.token" 2>/dev/null)" \
    "https://127.0.0.1:$API_PORT/readyz" >/dev/null 2>&1
}

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# prepare writes the tokens, service-account keys and kubeconfig once per state directory.
prepare() {
  mkdir -p "$STATE/certs" "$STATE/logs"
  chmod 700 "$STATE"
  if [ ! -f "$STATE/tokens.csv" ]; then
    local admin nobody
    admin=$(openssl rand -hex 16); nobody=$(openssl rand -hex 16)
    printf '%s' "$admin" > "$STATE/admin.token"
    printf '%s' "$nobody" > "$STATE/nobody.token"
    printf '%s,admin,admin-uid,"system:masters"\n%s,nobody,nobody-uid\n' "$admin" "$nobody" > "$STATE/tokens.csv"
    chmod 600 "$STATE/tokens.csv" "$STATE/admin.token" "$STATE/nobody.token"
  fi
  if [ ! -f "$STATE/sa.key" ]; then
    openssl genrsa -out "$STATE/sa.key" 2048 2>/dev/null
    openssl rsa -in "$STATE/sa.key" -pubout -out "$STATE/sa.pub" 2>/dev/null
  fi
}

write_kubeconfig() {
  local ca; ca=$(base64 -w0 < "$STATE/certs/apiserver.crt")
  umask 077
  cat > "$KUBECONFIG_PATH.tmp" <<KC
apiVersion: v1
kind: Config
clusters:
- name: local
  cluster:
    server: https://127.0.0.1:$API_PORT
    certificate-authority-data: $ca
users:
- name: admin
  user:
    token: $(cat "$STATE/admin.token")
- name: nobody
  user:
    token: $(cat "$STATE/nobody.token")
contexts:
- name: admin
  context: {cluster: local, user: admin, namespace: default}
- name: nobody
  context: {cluster: local, user: nobody, namespace: default}
current-context: admin
KC
  mv "$KUBECONFIG_PATH.tmp" "$KUBECONFIG_PATH"
}

start_etcd() {
  pid_alive "$STATE/etcd.pid" && return 0
  port_free "$ETCD_PORT" || die "port $ETCD_PORT is taken by another program; set KUBEEVENTS_ETCD_PORT"
  # etcd reads every ETCD_* variable as a flag: start it with none of them.
  env $(env | awk -F= '/^ETCD_/ {printf "-u %s ", $1}') \
    "$BIN_DIR/etcd" --name local --data-dir "$STATE/etcd" --unsafe-no-fsync \
    --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
    --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-cluster "local=http://127.0.0.1:$ETCD_PEER_PORT" --listen-metrics-urls "" \
    --quota-backend-bytes $((4 * 1024 * 1024 * 1024)) \
    >"$STATE/logs/etcd.log" 2>&1 < /dev/null &
  echo $! > "$STATE/etcd.pid"
  local i
  for i in $(seq 1 100); do
    curl -sf --max-time 1 "http://127.0.0.1:$ETCD_PORT/health" >/dev/null 2>&1 && return 0
    pid_alive "$STATE/etcd.pid" || break
    sleep 0.2
  done
  tail -20 "$STATE/logs/etcd.log" >&2
  die "etcd did not become healthy (log: $STATE/logs/etcd.log)"
}

start_apiserver() {
  pid_alive "$STATE/kube-apiserver.pid" && return 0
  port_free "$API_PORT" || die "port $API_PORT is taken by another program; set KUBEEVENTS_APISERVER_PORT"
  "$BIN_DIR/kube-apiserver" \
    --etcd-servers "http://127.0.0.1:$ETCD_PORT" \
    --bind-address 127.0.0.1 --secure-port "$API_PORT" \
    --advertise-address 127.0.0.1 --endpoint-reconciler-type none \
    --cert-dir "$STATE/certs" \
    --token-auth-file "$STATE/tokens.csv" \
    --authorization-mode RBAC \
    --service-account-key-file "$STATE/sa.pub" \
    --service-account-signing-key-file "$STATE/sa.key" \
    --service-account-issuer https://kubernetes.default.svc \
    --service-cluster-ip-range 10.96.0.0/16 \
    --disable-admission-plugins ServiceAccount \
    --allow-privileged=false \
    --profiling=false \
    >"$STATE/logs/kube-apiserver.log" 2>&1 < /dev/null &
  echo $! > "$STATE/kube-apiserver.pid"
  local i
  for i in $(seq 1 300); do
    if [ -f "$STATE/certs/apiserver.crt" ] && healthy; then return 0; fi
    pid_alive "$STATE/kube-apiserver.pid" || break
    sleep 0.2
  done
  tail -20 "$STATE/logs/kube-apiserver.log" >&2
  die "kube-apiserver did not become ready (log: $STATE/logs/kube-apiserver.log)"
}

up() {
  if healthy && pid_alive "$STATE/etcd.pid" && pid_alive "$STATE/kube-apiserver.pid"; then
    echo "$KUBECONFIG_PATH"; return 0
  fi
  build
  prepare
  local t0=$SECONDS
  start_etcd
  start_apiserver
  write_kubeconfig
  printf '%s %s\n' "$API_PORT" "$ETCD_PORT" > "$PORTS_FILE"
  log "kube-apiserver $KUBE_VERSION ready on https://127.0.0.1:$API_PORT in $((SECONDS - t0))s"
  echo "$KUBECONFIG_PATH"
}

stop_pid() {
  local f=$1
  if pid_alive "$f"; then
    local pid; pid=$(cat "$f")
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$f"
}

down() {
  stop_pid "$STATE/kube-apiserver.pid"
  stop_pid "$STATE/etcd.pid"
  rm -rf "$STATE"
  log "stopped"
}

status() {
  if healthy; then
    echo "running: https://127.0.0.1:$API_PORT (kubeconfig $KUBECONFIG_PATH)"
  else
    echo "not running"; return 1
  fi
}

restart_apiserver() {
  local down_for=${1:-10}
  [ -f "$STATE/kube-apiserver.pid" ] || die "no cluster is running; run 'hack/cluster.sh up' first"
  same_cluster
  if pid_alive "$STATE/kube-apiserver.pid"; then kill -9 "$(cat "$STATE/kube-apiserver.pid")"; fi
  rm -f "$STATE/kube-apiserver.pid"
  log "kube-apiserver killed; starting again in ${down_for}s"
  sleep "$down_for"
  start_apiserver
  log "kube-apiserver back"
}

compact() {
  local rev
  same_cluster
  rev=$(curl -sf -X POST "http://127.0.0.1:$ETCD_PORT/v3/kv/range" -d '{"key":"AA=="}' | sed -n 's/.*"revision":"\([0-9]*\)".*/\1/p')
  [ -n "$rev" ] || die "could not read etcd's revision (is the cluster up?)"
  curl -sf -X POST "http://127.0.0.1:$ETCD_PORT/v3/kv/compaction" -d "{\"revision\":\"$rev\",\"physical\":true}" >/dev/null \
    || die "compaction to revision $rev failed"
  log "compacted etcd to revision $rev"
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  status) status ;;
  kubeconfig) [ -f "$KUBECONFIG_PATH" ] || die "no kubeconfig yet; run 'hack/cluster.sh up'"; echo "$KUBECONFIG_PATH" ;;
  bin) build; echo "$BIN_DIR" ;;
  build) build ;;
  restart-apiserver) shift; restart_apiserver "${1:-10}" ;;
  compact) compact ;;
  -h|--help|help) usage ;;
  *) usage >&2; exit 2 ;;
esac
