#!/usr/bin/env bash
# A real, local Kubernetes cluster for demos, end-to-end tests and benchmarks, built from Go
# modules (hack/tools/go.mod, and kwok's own module) and listening on 127.0.0.1 only:
#   living (the default): etcd, kube-apiserver, kube-controller-manager, kube-scheduler and
#     kwok simulating KUBEEVENTS_NODES nodes (default 3). Pods are scheduled, get IPs, go
#     Running and Ready within seconds (kwok's "general" stages: their delays can be set per
#     pod with kwok's annotations, e.g. pod-ready.stage.kwok.x-k8s.io/delay); deleted pods
#     go once their grace period is over; Deployments roll out; Jobs complete; namespaces
#     finish terminating;
#     garbage collection works. Pods labelled sim.kubeevents.dev/behavior=crashloop restart
#     every few seconds (CrashLoopBackOff in between), and those labelled =oomkill the same
#     with their containers OOMKilled (exit code 137) (hack/kwok/stages.yaml); pods labelled
#     pod-container-running-failed.stage.kwok.x-k8s.io=true fail, and nodes labelled
#     node-not-ready.stage.kwok.x-k8s.io=true go NotReady (kwok's own chaos stages).
#     The simulated nodes' kubelet endpoint is kwok's server (127.0.0.1, kwok's health
#     port, TLS that kube-apiserver verifies): kubectl logs [--previous] serves the files
#     that a kwok Logs object (kwok.x-k8s.io/v1alpha1, in the pod's namespace and named
#     after it) names.
#   bare (KUBEEVENTS_CLUSTER_MODE=bare): etcd and kube-apiserver alone. Nothing changes an
#     object by itself: pods stay Pending, namespaces never finish terminating.
set -euo pipefail

usage() {
  cat <<USAGE
usage: hack/cluster.sh COMMAND

  up                        build (cached) and start the cluster; print the kubeconfig path
                            (starts again any component of a running cluster that died)
  down                      stop the processes 'up' started (by PID) and remove the cluster state
  status                    report every component; exit 1 if any is not running or not healthy
  kubeconfig                print the kubeconfig path
  bin                       print the directory holding the cluster's binaries (builds them)
  build                     build the binaries into the cache, start nothing
  restart-apiserver [SECS]  SIGKILL kube-apiserver, wait SECS (default 10), start it again on the same etcd
  compact                   compact etcd to its current revision (forces 410 Gone on old watches)

environment:
  KUBEEVENTS_CLUSTER_MODE   living (default) or bare: see the top of this script
  KUBEEVENTS_NODES          simulated nodes in a living cluster (default 3)
  KUBEEVENTS_CLUSTER_DIR    state directory (default \${XDG_CACHE_HOME:-\$HOME/.cache}/kubeevents/cluster)
  KUBEEVENTS_APISERVER_PORT kube-apiserver port on 127.0.0.1 (default 16443); the health
                            ports of kube-controller-manager, kube-scheduler and kwok are
                            the next three ports (kwok's is the nodes' kubelet port too)
  KUBEEVENTS_ETCD_PORT      etcd client port on 127.0.0.1 (default 12379; peer port is +1)
  (once 'up' has run, the state directory remembers its ports and mode: later commands
  given only KUBEEVENTS_CLUSTER_DIR use them, and restart-apiserver and compact refuse other ports)
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
MODE="${KUBEEVENTS_CLUSTER_MODE:-living}"
NODES="${KUBEEVENTS_NODES:-3}"
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
if [ -f "$STATE/mode" ] && [ -z "${KUBEEVENTS_CLUSTER_MODE:-}" ]; then MODE=$(cat "$STATE/mode"); fi
if [ -f "$STATE/nodes" ] && [ -z "${KUBEEVENTS_NODES:-}" ]; then NODES=$(cat "$STATE/nodes"); fi
case "$MODE" in living|bare) ;; *) printf 'cluster: KUBEEVENTS_CLUSTER_MODE is "%s"; use living or bare\n' "$MODE" >&2; exit 2 ;; esac
case "$NODES" in ''|*[!0-9]*) printf 'cluster: KUBEEVENTS_NODES is "%s"; give a number of nodes\n' "$NODES" >&2; exit 2 ;; esac
KCM_PORT=$((API_PORT + 1))
SCHEDULER_PORT=$((API_PORT + 2))
KWOK_PORT=$((API_PORT + 3))

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
    # The four Kubernetes commands in one go build: their shared packages compile once
    # and their links (single-threaded, the longest steps) overlap other work.
    local pkgs=() b
    for b in kubectl kube-apiserver kube-controller-manager kube-scheduler; do
      [ -x "$BIN_DIR.tmp/$b" ] || pkgs+=("k8s.io/kubernetes/cmd/$b")
    done
    if [ ${#pkgs[@]} -gt 0 ]; then
      log "building ${pkgs[*]##*/} $KUBE_VERSION (about 10 minutes on 2 cores, once)"
      go build -trimpath -ldflags "$ld" -o "$BIN_DIR.tmp/" "${pkgs[@]}"
    fi
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

# Every process of the cluster runs in a session of its own (setsid): a Ctrl-C in the
# terminal that started it (make demo) goes to that terminal's process group, and would
# otherwise stop the cluster too (Go programs that handle SIGINT undo the ignoring that a
# script's background jobs inherit).
pid_alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

healthy() {
  [ -f "$STATE/certs/apiserver.crt" ] || return 1
  curl -sf --max-time 2 --cacert "$STATE/certs/apiserver.crt" \
    -H "Authorization: Bearer $(cat "$STATE/admin.token" 2>/dev/null)" \
    "https://127.0.0.1:$API_PORT/readyz" >/dev/null 2>&1
}

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# prepare writes the tokens, service-account keys and kubeconfig once per state directory.
# The identities of the cluster's clients: admin (system:masters), nobody (no rights), and
# the control-plane components under the user names RBAC's bootstrap policy binds to.
TOKEN_USERS="admin nobody kube-controller-manager kube-scheduler kwok"

# prepare writes the tokens, service-account keys and kubeconfigs' secrets once per state
# directory.
prepare() {
  mkdir -p "$STATE/certs" "$STATE/logs"
  chmod 700 "$STATE"
  local u
  for u in $TOKEN_USERS; do
    [ -f "$STATE/$u.token" ] || { (umask 077; openssl rand -hex 16 | tr -d '\n' > "$STATE/$u.token"); }
  done
  (
    umask 077
    printf '%s,admin,admin-uid,"system:masters"\n' "$(cat "$STATE/admin.token")"
    printf '%s,nobody,nobody-uid\n' "$(cat "$STATE/nobody.token")"
    printf '%s,system:kube-controller-manager,kcm-uid\n' "$(cat "$STATE/kube-controller-manager.token")"
    printf '%s,system:kube-scheduler,scheduler-uid\n' "$(cat "$STATE/kube-scheduler.token")"
    # kwok writes the status of nodes and pods, leases and events as kubelets do; in this
    # local cluster it simply gets full rights.
    printf '%s,kwok,kwok-uid,"system:masters"\n' "$(cat "$STATE/kwok.token")"
  ) > "$STATE/tokens.csv"
  if [ ! -f "$STATE/sa.key" ]; then
    openssl genrsa -out "$STATE/sa.key" 2048 2>/dev/null
    openssl rsa -in "$STATE/sa.key" -pubout -out "$STATE/sa.pub" 2>/dev/null
  fi
  # The simulated nodes' kubelet endpoint (kwok's server) serves this certificate for
  # 127.0.0.1, and kube-apiserver trusts it as the kubelets' CA: logs, exec and
  # port-forward go to the nodes over TLS verified as in a real cluster.
  if [ ! -f "$STATE/certs/kubelet.crt" ]; then
    openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=kwok-kubelet" \
      -addext "subjectAltName=IP:127.0.0.1" -addext "extendedKeyUsage=serverAuth" \
      -keyout "$STATE/certs/kubelet.key" -out "$STATE/certs/kubelet.crt.tmp" 2>/dev/null \
      || die "could not make the kubelet serving certificate with openssl"
    mv "$STATE/certs/kubelet.crt.tmp" "$STATE/certs/kubelet.crt"
  fi
}

# component_kubeconfig NAME USER writes a kubeconfig for one control-plane component.
component_kubeconfig() {
  (
    umask 077
    { kubeconfig_cluster; cat <<KC
users:
- name: $2
  user:
    token: $(cat "$STATE/$1.token")
contexts:
- name: local
  context: {cluster: local, user: $2}
current-context: local
KC
    } > "$STATE/$1.kubeconfig"
  )
}

# kubeconfig_cluster prints the start of a kubeconfig: the local cluster and its CA.
kubeconfig_cluster() {
  cat <<KC
apiVersion: v1
kind: Config
clusters:
- name: local
  cluster:
    server: https://127.0.0.1:$API_PORT
    certificate-authority-data: $(base64 -w0 < "$STATE/certs/apiserver.crt")
KC
}

write_kubeconfig() {
  umask 077
  { kubeconfig_cluster; cat <<KC
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
  } > "$KUBECONFIG_PATH.tmp"
  mv "$KUBECONFIG_PATH.tmp" "$KUBECONFIG_PATH"
}

start_etcd() {
  pid_alive "$STATE/etcd.pid" && return 0
  port_free "$ETCD_PORT" || die "port $ETCD_PORT is taken by another program; set KUBEEVENTS_ETCD_PORT"
  # etcd reads every ETCD_* variable as a flag: start it with none of them. Its quota is
  # etcd's largest advised (8 GB): make bench-mem N=100000 stores about 20 KB per pod
  # (2026-11-23: 632 MB with 32,000), and a second population after hack/bench.sh clean
  # adds as much again until the space is compacted and defragmented.
  env $(env | awk -F= '/^ETCD_/ {printf "-u %s ", $1}') \
    setsid "$BIN_DIR/etcd" --name local --data-dir "$STATE/etcd" --unsafe-no-fsync \
    --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
    --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-cluster "local=http://127.0.0.1:$ETCD_PEER_PORT" --listen-metrics-urls "" \
    --quota-backend-bytes $((8 * 1024 * 1024 * 1024)) \
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
  # The nodes' kubelets are reached at their InternalIP (kwok's --node-ip) and the port
  # they report, over TLS checked against prepare's certificate (a state directory from
  # before it had none: kube-apiserver then skips the check, as it does without the flag).
  local kubelet_ca=()
  [ -f "$STATE/certs/kubelet.crt" ] && kubelet_ca=(--kubelet-certificate-authority "$STATE/certs/kubelet.crt")
  setsid "$BIN_DIR/kube-apiserver" \
    --kubelet-preferred-address-types InternalIP "${kubelet_ca[@]}" \
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

# kwok's own stages, from its published module: nodes initialised and heart-beating with
# leases (what kwokctl configures), pods through kwok's "general" stages (created with
# containers ContainerCreating, then Running and Ready, a second or a few later; Jobs' pods
# completing; deleted pods removed once their grace period is over), and its chaos stages
# for failing containers and for nodes going NotReady. hack/kwok/stages.yaml adds ours.
KWOK_STAGES="node/fast/node-initialize.yaml node/heartbeat-with-lease/node-heartbeat-with-lease.yaml
  node/chaos/node-not-ready.yaml
  pod/general/pod-create.yaml pod/general/pod-init-container-running.yaml
  pod/general/pod-init-container-completed.yaml pod/general/pod-ready.yaml
  pod/general/pod-complete.yaml pod/general/pod-delete.yaml
  pod/chaos/pod-container-running-failed.yaml"
KWOK_STAGES_FILE="$BIN_DIR/kwok-stages-$(echo $KWOK_STAGES | cksum | cut -d' ' -f1).yaml"

# kwok's definition of its Logs resource (CRD), from its published module: kwok reads
# Logs objects from the cluster (--enable-crds Logs) to serve containers' logs.
KWOK_LOGS_CRD_FILE="$BIN_DIR/kwok-crd-logs.yaml"

# kwok_module_dir prints the directory of kwok's module in the Go module cache.
kwok_module_dir() {
  (cd "$TOOLS_DIR" && GOFLAGS= go mod download -json "sigs.k8s.io/kwok@$KWOK_VERSION" | sed -n 's/^\s*"Dir": "\(.*\)",\?$/\1/p')
}

# kwok_stages writes kwok's stages above into one config file beside the binaries, and
# copies its Logs CRD there.
kwok_stages() {
  [ -s "$KWOK_STAGES_FILE" ] && [ -s "$KWOK_LOGS_CRD_FILE" ] && return 0
  local dir f out="$KWOK_STAGES_FILE.tmp"
  dir=$(kwok_module_dir)
  [ -d "$dir/kustomize/stage" ] || die "could not find kwok $KWOK_VERSION's stages in the module cache"
  : > "$out"
  for f in $KWOK_STAGES; do
    { echo "---"; cat "$dir/kustomize/stage/$f"; } >> "$out"
  done
  mv "$out" "$KWOK_STAGES_FILE"
  cp "$dir/kustomize/crd/bases/kwok.x-k8s.io_logs.yaml" "$KWOK_LOGS_CRD_FILE.tmp" \
    || die "could not find kwok $KWOK_VERSION's Logs CRD in the module cache"
  mv "$KWOK_LOGS_CRD_FILE.tmp" "$KWOK_LOGS_CRD_FILE"
}

# kwok_logs_crd creates kwok's Logs CRD and waits until it is served, so that kwok finds
# it when it starts.
kwok_logs_crd() {
  "$BIN_DIR/kubectl" --kubeconfig "$KUBECONFIG_PATH" apply -f "$KWOK_LOGS_CRD_FILE" >/dev/null \
    || die "could not create kwok's Logs CRD"
  "$BIN_DIR/kubectl" --kubeconfig "$KUBECONFIG_PATH" wait --for condition=established --timeout 60s \
    crd/logs.kwok.x-k8s.io >/dev/null || die "kwok's Logs CRD was not established in 60s"
}

# start_component NAME ARGS...: start one control-plane process in the background,
# recording its PID, unless it is already running.
start_component() {
  local name=$1; shift
  pid_alive "$STATE/$name.pid" && return 0
  if [ -f "$STATE/$name.pid" ]; then
    log "$name had died (last lines of $STATE/logs/$name.log below); starting it again"
    tail -5 "$STATE/logs/$name.log" >&2 || true
  fi
  setsid "$@" >>"$STATE/logs/$name.log" 2>&1 < /dev/null &
  echo $! > "$STATE/$name.pid"
}

start_controller_manager() {
  component_kubeconfig kube-controller-manager system:kube-controller-manager
  # Each controller runs with its own service account's rights, as in kubeadm clusters.
  start_component kube-controller-manager "$BIN_DIR/kube-controller-manager" \
    --kubeconfig "$STATE/kube-controller-manager.kubeconfig" \
    --authentication-kubeconfig "$STATE/kube-controller-manager.kubeconfig" \
    --authorization-kubeconfig "$STATE/kube-controller-manager.kubeconfig" \
    --bind-address 127.0.0.1 --secure-port "$KCM_PORT" \
    --cert-dir "$STATE/certs/kube-controller-manager" \
    --leader-elect=false \
    --use-service-account-credentials \
    --service-account-private-key-file "$STATE/sa.key" \
    --root-ca-file "$STATE/certs/apiserver.crt" \
    --cluster-name kubeevents-local \
    --profiling=false
}

start_scheduler() {
  component_kubeconfig kube-scheduler system:kube-scheduler
  start_component kube-scheduler "$BIN_DIR/kube-scheduler" \
    --kubeconfig "$STATE/kube-scheduler.kubeconfig" \
    --authentication-kubeconfig "$STATE/kube-scheduler.kubeconfig" \
    --authorization-kubeconfig "$STATE/kube-scheduler.kubeconfig" \
    --bind-address 127.0.0.1 --secure-port "$SCHEDULER_PORT" \
    --cert-dir "$STATE/certs/kube-scheduler" \
    --leader-elect=false \
    --profiling=false
}

# kwok's server is the simulated nodes' kubelet endpoint too: the nodes report 127.0.0.1
# as their InternalIP and its port as their kubelet's (node-initialize stage), so
# kube-apiserver reaches it for logs, exec and port-forward; it serves TLS (prepare's
# certificate) and plain HTTP (the health check) on the same port, on 127.0.0.1 only.
start_kwok() {
  component_kubeconfig kwok kwok
  start_component kwok "$BIN_DIR/kwok" \
    --kubeconfig "$STATE/kwok.kubeconfig" \
    --config "$KWOK_STAGES_FILE" --config "$ROOT/hack/kwok/stages.yaml" \
    --manage-all-nodes=false \
    --manage-nodes-with-annotation-selector kwok.x-k8s.io/node=fake \
    --cidr 10.244.0.0/16 --node-ip 127.0.0.1 --node-port "$KWOK_PORT" \
    --node-lease-duration-seconds 40 \
    --server-address "127.0.0.1:$KWOK_PORT" \
    --tls-cert-file "$STATE/certs/kubelet.crt" --tls-private-key-file "$STATE/certs/kubelet.key" \
    --enable-crds Logs
}

# add_nodes creates the simulated nodes kwok manages (annotation kwok.x-k8s.io/node=fake).
add_nodes() {
  local i manifest=""
  for i in $(seq 0 $((NODES - 1))); do
    manifest+="apiVersion: v1
kind: Node
metadata:
  name: kwok-node-$i
  annotations: {kwok.x-k8s.io/node: fake, node.alpha.kubernetes.io/ttl: \"0\"}
  labels: {type: kwok, kubernetes.io/hostname: kwok-node-$i, kubernetes.io/os: linux, kubernetes.io/arch: amd64, topology.kubernetes.io/zone: zone-$((i % 3))}
status:
  allocatable: {cpu: \"32\", memory: 256Gi, pods: \"110000\"}
  capacity: {cpu: \"32\", memory: 256Gi, pods: \"110000\"}
---
"
  done
  [ -n "$manifest" ] || return 0
  printf '%s' "$manifest" | "$BIN_DIR/kubectl" --kubeconfig "$KUBECONFIG_PATH" apply -f - >/dev/null \
    || die "could not create the simulated nodes"
}

# wait_living waits until the scheduler and controllers serve and every simulated node is
# Ready, so that a test started right after 'up' sees pods scheduled and running.
wait_living() {
  local i ready
  for i in $(seq 1 300); do
    ready=$("$BIN_DIR/kubectl" --kubeconfig "$KUBECONFIG_PATH" get nodes -l type=kwok \
      -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' 2>/dev/null | grep -c True || true)
    if [ "$ready" -ge "$NODES" ] && component_healthy kube-controller-manager && component_healthy kube-scheduler; then
      return 0
    fi
    for c in kube-controller-manager kube-scheduler kwok; do
      pid_alive "$STATE/$c.pid" || { tail -20 "$STATE/logs/$c.log" >&2; die "$c exited while starting (log: $STATE/logs/$c.log)"; }
    done
    sleep 0.2
  done
  die "the living cluster did not become ready in 60s ($ready of $NODES nodes Ready; logs in $STATE/logs)"
}

# component_healthy NAME: the component's own health endpoint answers ok.
component_healthy() {
  case "$1" in
    etcd) curl -sf --max-time 2 "http://127.0.0.1:$ETCD_PORT/health" >/dev/null 2>&1 ;;
    kube-apiserver) healthy ;;
    kube-controller-manager) curl -skf --max-time 2 "https://127.0.0.1:$KCM_PORT/healthz" >/dev/null 2>&1 ;;
    kube-scheduler) curl -skf --max-time 2 "https://127.0.0.1:$SCHEDULER_PORT/healthz" >/dev/null 2>&1 ;;
    kwok) curl -sf --max-time 2 "http://127.0.0.1:$KWOK_PORT/healthz" >/dev/null 2>&1 ;;
  esac
}

components() {
  if [ "$MODE" = living ]; then echo etcd kube-apiserver kube-controller-manager kube-scheduler kwok
  else echo etcd kube-apiserver; fi
}

all_running() {
  local c
  for c in $(components); do pid_alive "$STATE/$c.pid" || return 1; done
  healthy
}

up() {
  if all_running; then
    echo "$KUBECONFIG_PATH"; return 0
  fi
  if [ -f "$STATE/mode" ] && [ "$(cat "$STATE/mode")" != "$MODE" ]; then
    die "$STATE holds a $(cat "$STATE/mode") cluster, not a $MODE one; run 'hack/cluster.sh down' first"
  fi
  build
  prepare
  local t0=$SECONDS
  start_etcd
  start_apiserver
  write_kubeconfig
  printf '%s %s\n' "$API_PORT" "$ETCD_PORT" > "$PORTS_FILE"
  echo "$MODE" > "$STATE/mode"
  echo "$NODES" > "$STATE/nodes"
  if [ "$MODE" = living ]; then
    kwok_stages
    kwok_logs_crd
    start_controller_manager
    start_scheduler
    start_kwok
    add_nodes
    wait_living
    log "living cluster ready on https://127.0.0.1:$API_PORT in $((SECONDS - t0))s: kube-apiserver, kube-controller-manager and kube-scheduler $KUBE_VERSION, kwok $KWOK_VERSION with $NODES nodes"
  else
    log "bare cluster (etcd + kube-apiserver $KUBE_VERSION) ready on https://127.0.0.1:$API_PORT in $((SECONDS - t0))s"
  fi
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
  stop_pid "$STATE/kwok.pid"
  stop_pid "$STATE/kube-scheduler.pid"
  stop_pid "$STATE/kube-controller-manager.pid"
  stop_pid "$STATE/kube-apiserver.pid"
  stop_pid "$STATE/etcd.pid"
  rm -rf "$STATE"
  log "stopped"
}

# status reports every component of the cluster's mode: running and healthy, running but
# not answering its health check, or not running (with the last lines of its log).
status() {
  if [ ! -f "$STATE/kube-apiserver.pid" ] && [ ! -f "$STATE/etcd.pid" ]; then
    echo "not running"; return 1
  fi
  local c bad=0
  echo "$MODE cluster: https://127.0.0.1:$API_PORT (kubeconfig $KUBECONFIG_PATH)"
  for c in $(components); do
    if ! pid_alive "$STATE/$c.pid"; then
      printf '  %-24s not running (log: %s)\n' "$c" "$STATE/logs/$c.log"
      tail -3 "$STATE/logs/$c.log" 2>/dev/null | sed 's/^/      /'
      bad=1
    elif component_healthy "$c"; then
      printf '  %-24s running, healthy (pid %s)\n' "$c" "$(cat "$STATE/$c.pid")"
    else
      printf '  %-24s running, NOT healthy (pid %s, log: %s)\n' "$c" "$(cat "$STATE/$c.pid")" "$STATE/logs/$c.log"
      bad=1
    fi
  done
  if [ "$MODE" = living ] && [ $bad = 0 ]; then
    local ready
    ready=$("$BIN_DIR/kubectl" --kubeconfig "$KUBECONFIG_PATH" get nodes -l type=kwok --no-headers 2>/dev/null | grep -c ' Ready ' || true)
    printf '  %-24s %s of %s Ready\n' "simulated nodes" "$ready" "$NODES"
  fi
  return $bad
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
