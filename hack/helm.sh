#!/usr/bin/env bash
# Prints the path of helm, built (once, cached by version) from its Go module pinned in
# hack/tools/helm/go.mod: the chart's checks (make test) and its install on the local
# cluster use it. Never a downloaded binary. The cache is
# ${XDG_CACHE_HOME:-~/.cache}/kubeevents/bin/helm-VERSION_GOVERSION/helm, beside the
# cluster's binaries (hack/cluster.sh).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
MOD_DIR="$ROOT/hack/tools/helm"
HELM_VERSION=$(awk '$1 == "require" && $2 == "helm.sh/helm/v4" { print $3 }' "$MOD_DIR/go.mod")
[ -n "$HELM_VERSION" ] || { echo "helm: no helm.sh/helm/v4 version in $MOD_DIR/go.mod" >&2; exit 1; }
CACHE_ROOT="${XDG_CACHE_HOME:-$HOME/.cache}/kubeevents"
GO_VERSION=$(go env GOVERSION 2>/dev/null || echo unknown)
BIN_DIR="$CACHE_ROOT/bin/helm-${HELM_VERSION}_${GO_VERSION}"

if [ ! -x "$BIN_DIR/helm" ]; then
  mkdir -p "$CACHE_ROOT"
  # One build at a time (two make targets may ask together): the second waits, then finds it.
  exec 8>"$CACHE_ROOT/helm-build.lock"
  flock 8
  if [ ! -x "$BIN_DIR/helm" ]; then
    echo "helm: building helm $HELM_VERSION from its Go module (about 2 minutes, once)" >&2
    t0=$SECONDS
    mkdir -p "$BIN_DIR.tmp"
    (cd "$MOD_DIR" && CGO_ENABLED=0 GOFLAGS=-mod=readonly go build -trimpath \
      -ldflags "-s -w -X helm.sh/helm/v4/internal/version.version=$HELM_VERSION" \
      -o "$BIN_DIR.tmp/helm" helm.sh/helm/v4/cmd/helm) || { echo "helm: build failed (see above)" >&2; exit 1; }
    rm -rf "$BIN_DIR" && mv "$BIN_DIR.tmp" "$BIN_DIR"
    echo "helm: built in $((SECONDS - t0))s into $BIN_DIR" >&2
  fi
  exec 8>&-
fi
echo "$BIN_DIR/helm"
