# kubeevents — see README.md. Every target brings up what it needs itself.
SHELL := bash
GO ?= go
BIN := bin/kubeevents
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X github.com/kubeevents/kubeevents/internal/version.version=$(VERSION) \
	-X github.com/kubeevents/kubeevents/internal/version.commit=$(shell git rev-parse --short HEAD 2>/dev/null) \
	-X github.com/kubeevents/kubeevents/internal/version.date=$(shell date -u +%Y-%m-%dT%H:%M:%SZ)

.PHONY: docs build demo demo-rollout lint test test-unit test-e2e test-bench test-faults soak fuzz cluster-up cluster-down bench bench-mem bench-replay bench-store completions release-check clean

build:
	$(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(BIN) .

# Builds (once, cached) and starts the living local cluster (hack/cluster.sh), rolls a
# Deployment out again and again in namespace "demo" beside a pod that keeps restarting,
# and watches the Deployments and pods until Ctrl-C.
demo: build
	hack/demo.sh

# Follows rollouts with watch TYPE/NAME --owned --until-rollout on the living local
# cluster: one that succeeds, one that passes its progress deadline, the rollback, a Job.
demo-rollout: build
	hack/demo-rollout.sh

cluster-up:
	hack/cluster.sh up

cluster-down:
	hack/cluster.sh down

# Unit tests, fuzz seed corpora, and end-to-end tests against the real local cluster
# (brought up here; under CI=true a missing cluster fails the run, it is never skipped).
test: test-unit test-e2e test-bench

# staticcheck with its default checks: likely bugs, deprecated APIs, unused code,
# simplifications, and the style checks it enables by default — what go vet leaves out,
# from one well-kept tool rather than a bundle of linters to tune. Built once per version
# into the cache (v0.8.2 is the module version of its release 2026.2.2).
STATICCHECK_VERSION := v0.8.2
STATICCHECK := $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/kubeevents/tools/staticcheck-$(STATICCHECK_VERSION)/staticcheck
$(STATICCHECK):
	GOBIN=$(dir $(STATICCHECK)) GOFLAGS= $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

lint: $(STATICCHECK)
	$(GO) vet ./...
	$(STATICCHECK) ./...

test-unit: lint
	$(GO) test -race -count=1 ./internal/... ./cmd/...
	# The checkpoint of 10,000 realistic pods in the cluster's Secrets: its sizes, without
	# the race detector (which makes it 20 times slower; the run above skips it).
	$(GO) test -count=1 -run '^TestTenThousandRealisticPods$$' ./internal/clusterstore/

# The tests of several clusters in one stream (test/e2e/clusters_test.go) need a second
# cluster beside the first: hack/clusters.sh starts it (bare, ports the first's + 3000 by
# default), and it is stopped at the end, whatever the outcome. E2E_RUN='^TestClusters'
# runs some tests only. The chart's tests (TestChart, TestHA*) use helm, built once from
# its Go module by hack/helm.sh.
E2E_RUN ?=
test-e2e: cluster-up
	hack/clusters.sh up 2 >/dev/null
	status=0; \
	KUBEEVENTS_KUBECONFIG=$$(hack/cluster.sh kubeconfig) KUBEEVENTS_CLUSTER_BIN=$$(hack/cluster.sh bin) \
	KUBEEVENTS_SECOND_CLUSTER_DIR=$$(hack/clusters.sh dir 2) KUBEEVENTS_HELM=$$(hack/helm.sh) \
		$(GO) test -count=1 -timeout 30m -run '$(E2E_RUN)' ./test/e2e/... || status=$$?; \
	env $$(hack/clusters.sh env 2) hack/cluster.sh down >/dev/null; \
	exit $$status

# Fault, bad-input and security tests (test/e2e: TestFault*, TestBadInput*, TestSecurity*)
# against a SEPARATE local cluster of their own, since they kill its kube-apiserver and
# compact its etcd: never the cluster of cluster-up/test-e2e. Brought up here and torn
# down at the end, whatever the outcome.
FAULTS_CLUSTER_DIR ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/kubeevents/cluster-faults
FAULTS_APISERVER_PORT ?= 17443
FAULTS_ETCD_PORT ?= 13379
# A bare cluster (etcd + kube-apiserver alone): no controller or simulated node touches the
# fault tests' objects, so what they count is what they did.
FAULTS_CLUSTER := KUBEEVENTS_CLUSTER_MODE=bare KUBEEVENTS_CLUSTER_DIR=$(FAULTS_CLUSTER_DIR) KUBEEVENTS_APISERVER_PORT=$(FAULTS_APISERVER_PORT) KUBEEVENTS_ETCD_PORT=$(FAULTS_ETCD_PORT)
FAULTS_RUN ?= ^Test(Fault|BadInput|Security)
test-faults:
	$(FAULTS_CLUSTER) hack/cluster.sh up >/dev/null
	status=0; \
	KUBEEVENTS_KUBECONFIG=$(FAULTS_CLUSTER_DIR)/kubeconfig KUBEEVENTS_CLUSTER_BIN=$$(hack/cluster.sh bin) \
	KUBEEVENTS_FAULTS_CLUSTER_DIR=$(FAULTS_CLUSTER_DIR) KUBEEVENTS_FAULTS_KUBECONFIG=$(FAULTS_CLUSTER_DIR)/kubeconfig \
	KUBEEVENTS_FAULTS_APISERVER_PORT=$(FAULTS_APISERVER_PORT) KUBEEVENTS_FAULTS_ETCD_PORT=$(FAULTS_ETCD_PORT) \
		$(GO) test -count=1 -timeout 30m -v -run '$(FAULTS_RUN)' ./test/e2e/ || status=$$?; \
	$(FAULTS_CLUSTER) hack/cluster.sh down; \
	exit $$status

# The soak test (test/e2e/soak_test.go): kubeevents against a LIVING cluster of
# its own for SOAK_DURATION (default 30m) of steady churn with a random fault every 1-3
# minutes (kube-apiserver killed, etcd compacted, a silent partition, kubeevents killed
# and resumed); it prints its figures. Not part of make test; CI runs it for 5 minutes.
SOAK_DURATION ?= 30m
SOAK_CLUSTER_DIR ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/kubeevents/cluster-soak
SOAK_APISERVER_PORT ?= 15443
SOAK_ETCD_PORT ?= 11379
SOAK_CLUSTER := KUBEEVENTS_CLUSTER_MODE=living KUBEEVENTS_CLUSTER_DIR=$(SOAK_CLUSTER_DIR) KUBEEVENTS_APISERVER_PORT=$(SOAK_APISERVER_PORT) KUBEEVENTS_ETCD_PORT=$(SOAK_ETCD_PORT)
soak:
	$(SOAK_CLUSTER) hack/cluster.sh up >/dev/null
	status=0; \
	KUBEEVENTS_KUBECONFIG=$(SOAK_CLUSTER_DIR)/kubeconfig KUBEEVENTS_CLUSTER_BIN=$$(hack/cluster.sh bin) \
	KUBEEVENTS_FAULTS_CLUSTER_DIR=$(SOAK_CLUSTER_DIR) KUBEEVENTS_FAULTS_KUBECONFIG=$(SOAK_CLUSTER_DIR)/kubeconfig \
	KUBEEVENTS_FAULTS_APISERVER_PORT=$(SOAK_APISERVER_PORT) KUBEEVENTS_FAULTS_ETCD_PORT=$(SOAK_ETCD_PORT) \
	KUBEEVENTS_SOAK_DURATION=$(SOAK_DURATION) \
		$(GO) test -count=1 -timeout 90m -v -run '^TestSoak$$' ./test/e2e/ || status=$$?; \
	$(SOAK_CLUSTER) hack/cluster.sh down; \
	exit $$status

# Benchmarks (bench/README.md): ratios of clients measured side by side
# on the local cluster. make bench [MODE=all|labels,status,mixed,rollout] [N=1000] [M=10]
# [D=100] [R=10] [ROLLOUTS=2] [RUNS=1] [CR=1]: kubeevents vs kubectl vs the decode floors
# on each churn mode, results in bench/results.json. make bench-mem [N=10000]: RSS and
# initial-sync CPU with many cached pods, results in bench/results-mem.json.
bench: cluster-up build
	KUBEEVENTS_BIN=$(BIN) hack/bench.sh e2e

bench-mem: cluster-up build
	KUBEEVENTS_BIN=$(BIN) hack/bench.sh mem

# kubeevents replay against jq -c . on a recording of 200,000 pod events made by kubeevents
# itself on a status churn: time (-o json, -o pretty with diffs) and memory on a recording
# ten times larger; results in bench/results-replay.json (bench/README.md).
bench-replay: cluster-up build
	KUBEEVENTS_BIN=$(BIN) hack/bench.sh replay

# The history store (bench/README.md "History store"), no cluster needed: store import of
# a status churn recording (events/s, size against the JSON Lines), then a store of
# STORE_VERSIONS versions (10 million: about an hour on 2 shared cores) for one object's history,
# get --at over 1,000 pods (warm and cold) and the writer's RSS there.
STORE_VERSIONS ?= 10000000
bench-store: build
	$(GO) run ./bench/store -kubeevents $(BIN) -versions $(STORE_VERSIONS)

# The benchmark harness on a short run (every churn mode with N=50 M=2, the rollout with 3
# Deployments x 2 replicas, the custom-resource variant, bench-mem with 50 pods): checks
# that every client saw every event, not times.
test-bench: cluster-up build
	KUBEEVENTS_BIN=$(BIN) hack/bench.sh short

# Each fuzz target for a bounded number of inputs (their seed corpora also run in
# test-unit). A count, not a duration: go1.26's fuzzing coordinator can report the end of
# a -fuzztime duration as a failure, "context deadline exceeded", with no failing input
# (golang/go#75804, fixed in go1.27); a count has no deadline to race. FUZZTIME=20s
# still works, with that flake.
FUZZTIME ?= 20000x
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzParseSinkSpec$$' -fuzztime $(FUZZTIME) ./internal/config/
	$(GO) test -run '^$$' -fuzz '^FuzzParseConfig$$' -fuzztime $(FUZZTIME) ./internal/config/
	$(GO) test -run '^$$' -fuzz '^FuzzParseIgnorePath$$' -fuzztime $(FUZZTIME) ./internal/diff/
	$(GO) test -run '^$$' -fuzz '^FuzzAppendJSONString$$' -fuzztime $(FUZZTIME) ./internal/jsonw/

# Regenerates the docs the code describes: docs/sinks.md's tables and docs/flags.md (unit
# tests fail when they are stale).
docs:
	$(GO) generate ./internal/config
	$(GO) run ./hack/gendocs flags docs/flags.md

# Regenerates the shell completion scripts in completions/ (a unit test fails when they
# are stale).
completions:
	GO=$(GO) hack/completions.sh

# goreleaser check, then a full snapshot release into dist/ (all archives, .deb, .rpm,
# krew manifest), the container image (an OCI layout, no docker, no push) and the Helm
# chart, and checks of what it built. Installs goreleaser once, cached by version.
release-check:
	hack/release-check.sh

clean:
	rm -rf bin dist
