# The two commands a newcomer needs are `make run` and `make test`; both
# install what they need first.
GO ?= go
BIN := bin/showdown

.PHONY: run test setup build bench clean k8s-bin k8s-test k8s-cluster-bin k8s-up k8s-down

setup:
	@bash scripts/setup.sh

build:
	$(GO) build -o $(BIN) ./cmd/showdown

run: setup build
	$(BIN) run plans/default.yaml

test: setup
	$(GO) vet ./...
	@# The short check on a real cluster (TestK8sCluster) runs when this says it can; make k8s-test runs the whole.
	@SHOWDOWN_K8S_BIN=$(K8S_BIN) bash scripts/cluster.sh preflight || echo "cluster: so TestK8sCluster skips"
	$(GO) test -count=1 -timeout 40m ./...
	# Fuzzing by count, not time: go1.26's fuzzer can fail a run whose
	# -fuzztime duration ends while a worker is busy (go.dev/issue/75804).
	$(GO) test -run '^$$' -fuzz '^FuzzRespParser$$' -fuzztime 300000x -timeout 5m ./load
	$(GO) test -run '^$$' -fuzz '^FuzzRespParserNetHTTP$$' -fuzztime 300000x -timeout 5m ./load
	cd services/go-stdlib && $(GO) vet ./... && $(GO) test -count=1 ./...
	cd services/go-gin && $(GO) vet ./... && $(GO) test -count=1 ./...
	cd services/node-http && npm ci --no-audit --no-fund --loglevel=error && npm test
	cd services/node-express && npm ci --no-audit --no-fund --loglevel=error && npm test
	cd services/node-fastify && npm ci --no-audit --no-fund --loglevel=error && npm test
	# The venv is the service's build output, made by TestConformance above.
	cd services/python-fastapi && .venv/bin/python -m unittest discover -s tests
	cd services/python-django && .venv/bin/python -m unittest discover -s tests

# The real API server test (internal/k8s TestRealAPIServer) needs etcd and
# kube-apiserver, built once from the tools/k8stest module into the user
# cache (a cold build is many minutes of CPU: docs/kubernetes.md). make test
# runs the test when they are there and skips it otherwise.
K8S_VERSION := v1.34.2
K8S_BIN ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/showdown/k8stest/$(K8S_VERSION)
K8S_LDFLAGS := -X k8s.io/component-base/version.gitVersion=$(K8S_VERSION) -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=34

$(K8S_BIN)/etcd:
	cd tools/k8stest && $(GO) build -p 2 -trimpath -o $@ ./etcd

$(K8S_BIN)/kube-apiserver:
	cd tools/k8stest && $(GO) build -p 2 -trimpath -ldflags '$(K8S_LDFLAGS)' -o $@ k8s.io/kubernetes/cmd/kube-apiserver

k8s-bin: $(K8S_BIN)/etcd $(K8S_BIN)/kube-apiserver

# The rest of a single-node cluster (scripts/cluster.sh): the same module's
# controller manager, scheduler, kubelet, kube-proxy and kubectl, CoreDNS
# from tools/coredns, and the pods' sandbox (tools/pause, static).
K8S_CLUSTER_CMDS := kube-controller-manager kube-scheduler kubelet kube-proxy kubectl

$(addprefix $(K8S_BIN)/,$(K8S_CLUSTER_CMDS)):
	cd tools/k8stest && $(GO) build -p 2 -trimpath -ldflags '$(K8S_LDFLAGS)' -o $@ k8s.io/kubernetes/cmd/$(notdir $@)

$(K8S_BIN)/coredns:
	cd tools/coredns && $(GO) build -p 2 -trimpath -o $@ .

$(K8S_BIN)/pause:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '-s -w' -o $@ ./tools/pause

k8s-cluster-bin: k8s-bin $(addprefix $(K8S_BIN)/,$(K8S_CLUSTER_CMDS)) $(K8S_BIN)/coredns $(K8S_BIN)/pause

k8s-up: k8s-cluster-bin
	SHOWDOWN_K8S_BIN=$(K8S_BIN) bash scripts/cluster.sh up

k8s-down:
	SHOWDOWN_K8S_BIN=$(K8S_BIN) bash scripts/cluster.sh down

# The whole Kubernetes check: the real API server test, then a cluster of
# upstream parts on this machine running plans/k8s-local.yaml end to end
# with its Ctrl-C paths (cmd/showdown TestK8sCluster, SHOWDOWN_K8S_FULL).
k8s-test: k8s-cluster-bin
	SHOWDOWN_K8S_BIN=$(K8S_BIN) $(GO) test -count=1 -run 'TestRealAPIServer|TestToolModuleVersion' -v ./internal/k8s/
	SHOWDOWN_K8S_BIN=$(K8S_BIN) SHOWDOWN_K8S_FULL=1 SHOWDOWN_K8S_RESULTS=$(CURDIR)/results $(GO) test -count=1 -timeout 40m -run '^TestK8sCluster$$' -v ./cmd/showdown/

clean:
	rm -rf bin
