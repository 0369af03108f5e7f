#!/usr/bin/env bash
# Regenerates the shell completion scripts in completions/ from the code (make
# completions; goreleaser's before hook). cmd/completion_test.go fails when they are stale.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
"$GO" build -o "$bin/kubeevents" .
mkdir -p completions
"$bin/kubeevents" completion bash > completions/kubeevents.bash
"$bin/kubeevents" completion zsh > completions/_kubeevents
"$bin/kubeevents" completion fish > completions/kubeevents.fish
"$bin/kubeevents" completion powershell > completions/kubeevents.ps1
