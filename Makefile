# kubeevents — see README.md. Every target brings up what it needs itself.
SHELL := bash
GO ?= go
BIN := bin/kubeevents
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X github.com/kubeevents/kubeevents/cmd.version=$(VERSION) \
	-X github.com/kubeevents/kubeevents/cmd.commit=$(shell git rev-parse --short HEAD 2>/dev/null) \
	-X github.com/kubeevents/kubeevents/cmd.date=$(shell date -u +%Y-%m-%dT%H:%M:%SZ)

.PHONY: build demo test test-unit test-e2e test-faults fuzz cluster-up cluster-down bench bench-mem completions release-check clean

build:
	$(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(BIN) .

# Builds (once, cached) and starts a local kube-apiserver + etcd, starts a little churn of
# pods and configmaps in namespace "demo", and watches the pods until Ctrl-C.
demo: build
	hack/demo.sh

cluster-up:
	hack/cluster.sh up

cluster-down:
	hack/cluster.sh down

# Unit tests, fuzz seed corpora, and end-to-end tests against the real local cluster
# (brought up here; under CI=true a missing cluster fails the run, it is never skipped).
test: test-unit test-e2e

test-unit:
	$(GO) vet ./...
	$(GO) test -race -count=1 ./internal/... ./cmd/...

test-e2e: cluster-up
	KUBEEVENTS_KUBECONFIG=$$(hack/cluster.sh kubeconfig) KUBEEVENTS_CLUSTER_BIN=$$(hack/cluster.sh bin) \
		$(GO) test -count=1 -timeout 30m ./test/e2e/...

# Each fuzz target for a bounded time (their seed corpora also run in test-unit).
FUZZTIME ?= 20s
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzParseSinkSpec$$' -fuzztime $(FUZZTIME) ./internal/config/
	$(GO) test -run '^$$' -fuzz '^FuzzParseConfig$$' -fuzztime $(FUZZTIME) ./internal/config/
	$(GO) test -run '^$$' -fuzz '^FuzzParseIgnorePath$$' -fuzztime $(FUZZTIME) ./internal/render/

clean:
	rm -rf bin dist
