# mysql-operator Makefile, in the kubebuilder v4 style. `make help` lists the targets.

SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec

BIN ?= $(CURDIR)/bin
IMG ?= mysql-operator:dev
GO_TEST_FLAGS ?=
export KUBEBUILDER_ASSETS := $(BIN)
export PATH := $(BIN):$(PATH)

CONTROLLER_GEN := $(BIN)/controller-gen
KWOK := $(BIN)/kwok
ETCD := $(BIN)/etcd
KUBE_APISERVER := $(BIN)/kube-apiserver
KUBE_CONTROLLER_MANAGER := $(BIN)/kube-controller-manager
KUBE_SCHEDULER := $(BIN)/kube-scheduler
KUBECTL := $(BIN)/kubectl
CONTROL_PLANE := $(ETCD) $(KUBE_APISERVER) $(KUBE_CONTROLLER_MANAGER) $(KUBE_SCHEDULER) $(KUBECTL) $(KWOK)

CONTROLLER_TOOLS_VERSION := v0.23.0
KWOK_VERSION := v0.8.0

##@ General

.PHONY: help
help: ## Show the targets.
	@awk 'BEGIN {FS = ":.*##"; printf "Usage: make <target>\n"} /^[a-zA-Z_0-9-]+:.*?##/ { printf "  %-18s %s\n", $$1, $$2 } /^##@/ { printf "\n%s\n", substr($$0, 5) }' $(MAKEFILE_LIST)

##@ Development

.PHONY: manifests
manifests: $(CONTROLLER_GEN) ## Generate the CRD and RBAC into kustomize/.
	$(CONTROLLER_GEN) crd paths=./api/... output:crd:artifacts:config=kustomize/crd/bases
	$(CONTROLLER_GEN) rbac:roleName=manager-role paths=./controller/... paths=./internal/metricsauth/... output:rbac:artifacts:config=kustomize/rbac

.PHONY: generate
generate: $(CONTROLLER_GEN) ## Generate the DeepCopy methods of the API.
	$(CONTROLLER_GEN) object paths=./api/...

.PHONY: fmt
fmt: ## Run go fmt.
	go fmt ./...

.PHONY: vet
vet: ## Run go vet.
	go vet ./...

.PHONY: verify
verify: manifests generate fmt vet ## Fail when regenerating or formatting leaves a diff.
	@git diff --exit-code -- api kustomize controller applyset cmd e2e || { echo "generated files are stale: run 'make manifests generate fmt' and commit"; exit 1; }

.PHONY: test
test: verify build control-plane ## Build the manager as the image does, then run every test (unit, envtest, e2e, short benchmark).
	go test $(GO_TEST_FLAGS) -count=1 -timeout 40m ./...

.PHONY: e2e
e2e: control-plane ## Run only the full-cluster e2e tests.
	go test $(GO_TEST_FLAGS) -count=1 -timeout 30m ./e2e/...

.PHONY: bench
bench: control-plane ## Run the full benchmark (N=10,100,500) and rewrite docs/benchmarks.md.
	go run ./cmd/bench -n 10,100,500 -out docs

##@ Build

.PHONY: build
build: ## Build the manager binary.
	CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o $(BIN)/manager ./cmd/manager

.PHONY: run-local
run-local: control-plane ## Start a local cluster, the operator and a sample MySQL; wait for Ready.
	go run ./cmd/local

.PHONY: docker-build
docker-build: build ## Build the image (needs a container engine; the binary is built the same way).
	docker build -t $(IMG) .

##@ Control plane (built from the Go module proxy into bin/, skipped when present)

.PHONY: control-plane
control-plane: $(CONTROL_PLANE) ## Build etcd, kube-apiserver, controller-manager, scheduler, kubectl and kwok.

$(ETCD):
	cd tools/etcd && go build -o $@ .

$(KUBE_APISERVER) $(KUBE_CONTROLLER_MANAGER) $(KUBE_SCHEDULER) $(KUBECTL):
	cd tools/k8s && go build -o $@ k8s.io/kubernetes/cmd/$(notdir $@)

$(CONTROLLER_GEN):
	GOBIN=$(BIN) go install sigs.k8s.io/controller-tools/cmd/controller-gen@$(CONTROLLER_TOOLS_VERSION)

# The local cluster also reads KWOK's stages from the module source this
# install puts in the module cache; keep KWOK_VERSION in step with
# KwokVersion in internal/cluster.
$(KWOK):
	GOBIN=$(BIN) go install sigs.k8s.io/kwok/cmd/kwok@$(KWOK_VERSION)
