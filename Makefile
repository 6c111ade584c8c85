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
KUBELET := $(BIN)/kubelet
KUBE_PROXY := $(BIN)/kube-proxy
CONTAINERD := $(BIN)/containerd
CTR := $(BIN)/ctr
SHIM := $(BIN)/containerd-shim-runc-v2
RUNC := $(BIN)/runc
CNI_PLUGINS := $(BIN)/cni/bridge $(BIN)/cni/host-local $(BIN)/cni/loopback $(BIN)/cni/portmap
COREDNS := $(BIN)/coredns
PAUSE := $(BIN)/pause
MARIADB_ROOTFS := $(BIN)/images/mariadb-10.11-rootfs.tar
NODE := $(KUBELET) $(KUBE_PROXY) $(CONTAINERD) $(CTR) $(SHIM) $(RUNC) $(CNI_PLUGINS) $(COREDNS) $(PAUSE) $(MARIADB_ROOTFS)
SOURCE_CONTROLLER := $(BIN)/source-controller
KUSTOMIZE_CONTROLLER := $(BIN)/kustomize-controller
FLUX_CRDS := $(BIN)/flux-crds
FLUX := $(SOURCE_CONTROLLER) $(KUSTOMIZE_CONTROLLER) $(FLUX_CRDS)
VERSITYGW := $(BIN)/versitygw
PROMETHEUS := $(BIN)/prometheus $(BIN)/promtool

# Debian packages the builds and tests need: iptables for kube-proxy,
# libseccomp-dev for runc, mmdebstrap for the database image, MariaDB for
# the SQL layer's tests on plain server processes, sysbench for
# cmd/throughput.
APT_PACKAGES := iptables libseccomp-dev mmdebstrap mariadb-server mariadb-client mariadb-backup sysbench

CONTROLLER_TOOLS_VERSION := v0.23.0
KWOK_VERSION := v0.8.0
VERSITYGW_VERSION := v1.8.0
PROMETHEUS_VERSION := v0.316.0
K8S_VERSION := v1.37.2
# Without these the binaries report v0.0.0-master, and nodes with them.
K8S_LDFLAGS := -X k8s.io/component-base/version.gitVersion=$(K8S_VERSION) -X k8s.io/component-base/version.gitMajor=1 \
	-X k8s.io/component-base/version.gitMinor=37 -X k8s.io/component-base/version.gitTreeState=clean

##@ General

.PHONY: help
help: ## Show the targets.
	@awk 'BEGIN {FS = ":.*##"; printf "Usage: make <target>\n"} /^[a-zA-Z_0-9-]+:.*?##/ { printf "  %-18s %s\n", $$1, $$2 } /^##@/ { printf "\n%s\n", substr($$0, 5) }' $(MAKEFILE_LIST)

##@ Development

.PHONY: manifests
manifests: $(CONTROLLER_GEN) ## Generate the CRD and RBAC into kustomize/, and from there into the Helm chart.
	$(CONTROLLER_GEN) crd paths=./api/... output:crd:artifacts:config=kustomize/crd/bases
	$(CONTROLLER_GEN) rbac:roleName=manager-role paths=./controller/... output:rbac:artifacts:config=kustomize/rbac
	go run ./cmd/chartgen

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
	@git diff --exit-code -- api agent backup objstore kustomize charts controller applyset dbop topology internal cmd e2e || { echo "generated files are stale: run 'make manifests generate fmt' and commit"; exit 1; }
	@test -z "$$(git status --porcelain --untracked-files=all -- charts)" || { git status --short -- charts; echo "the chart has files not committed: commit them"; exit 1; }

.PHONY: test
test: verify build control-plane node flux s3 prometheus ## Build the manager as the image does, then run every test (unit, envtest with real MariaDB servers, e2e on a real node, short benchmark).
	go test $(GO_TEST_FLAGS) -count=1 -timeout 40m ./...

.PHONY: e2e
e2e: control-plane node flux s3 prometheus ## Run only the full-cluster e2e tests.
	go test $(GO_TEST_FLAGS) -count=1 -timeout 30m ./e2e/...

.PHONY: bench
bench: control-plane ## Run the full benchmark (N=10,100,500) and rewrite docs/benchmarks.md.
	go run ./cmd/bench -n 10,100,500 -out docs

##@ Build

.PHONY: build
build: ## Build the manager and agent binaries, as the Dockerfile does.
	CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o $(BIN)/manager ./cmd/manager
	CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o $(BIN)/agent ./cmd/agent

.PHONY: plugin
plugin: ## Build the kubectl plugin into bin/kubectl-mysql (put bin/ on PATH for `kubectl mysql`).
	CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o $(BIN)/kubectl-mysql ./cmd/kubectl-mysql

.PHONY: run-local
run-local: control-plane s3 prometheus ## Start a local cluster (a real node where it can, with its S3 server and a Prometheus), the operator and a sample MySQL; wait for Ready.
	@$(MAKE) node || echo "the real node cannot be built here (it needs root and Debian's packages): the local cluster uses KWOK nodes"
	go run ./cmd/local

.PHONY: docker-build
docker-build: build ## Build the image (needs a container engine; the binary is built the same way).
	docker build -t $(IMG) .

##@ Control plane (built from the Go module proxy into bin/, skipped when present)

.PHONY: control-plane
control-plane: $(CONTROL_PLANE) ## Build etcd, kube-apiserver, controller-manager, scheduler, kubectl and kwok.

$(ETCD):
	cd tools/etcd && go build -o $@ .

$(KUBE_APISERVER) $(KUBE_CONTROLLER_MANAGER) $(KUBE_SCHEDULER) $(KUBECTL) $(KUBELET) $(KUBE_PROXY):
	cd tools/k8s && go build -ldflags='$(K8S_LDFLAGS)' -o $@ k8s.io/kubernetes/cmd/$(notdir $@)

$(CONTROLLER_GEN):
	GOBIN=$(BIN) go install sigs.k8s.io/controller-tools/cmd/controller-gen@$(CONTROLLER_TOOLS_VERSION)

# The local cluster also reads KWOK's stages from the module source this
# install puts in the module cache; keep KWOK_VERSION in step with
# KwokVersion in internal/cluster.
$(KWOK):
	GOBIN=$(BIN) go install sigs.k8s.io/kwok/cmd/kwok@$(KWOK_VERSION)

##@ Object storage (built from the Go module proxy into bin/, skipped when present)

.PHONY: s3
s3: $(VERSITYGW) ## Build versitygw, the S3 server of the backup tests and of the local cluster (Apache-2.0).

$(VERSITYGW):
	GOBIN=$(BIN) go install github.com/versity/versitygw/cmd/versitygw@$(VERSITYGW_VERSION)

##@ Prometheus (built from the Go module proxy into bin/, skipped when present)

.PHONY: prometheus
prometheus: $(PROMETHEUS) ## Build Prometheus 3 and promtool: the alerting rules' tests and the local cluster's Prometheus.

$(PROMETHEUS) &:
	GOBIN=$(BIN) go install github.com/prometheus/prometheus/cmd/prometheus@$(PROMETHEUS_VERSION) \
	  github.com/prometheus/prometheus/cmd/promtool@$(PROMETHEUS_VERSION)

##@ Real node (built from the Go module proxy and Debian's packages into bin/, skipped when present)

.PHONY: deps
deps: ## Install the Debian packages the builds and tests need (skipped when installed).
	@missing=$$(for p in $(APT_PACKAGES); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then echo "installing $$missing"; \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $$missing >/dev/null || \
	  { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $$missing >/dev/null; }; fi

.PHONY: node
node: deps $(NODE) ## Build the real node: kubelet, kube-proxy, containerd, runc, CNI plugins, CoreDNS, pause and the MariaDB image.

$(CONTAINERD) $(CTR) $(SHIM):
	cd tools/containerd && go build -tags no_btrfs -o $@ github.com/containerd/containerd/v2/cmd/$(notdir $@)

$(RUNC):
	cd tools/runc && CGO_ENABLED=1 go build -tags seccomp -o $@ github.com/opencontainers/runc

CNI_PKG_bridge := main/bridge
CNI_PKG_host-local := ipam/host-local
CNI_PKG_loopback := main/loopback
CNI_PKG_portmap := meta/portmap
$(BIN)/cni/%:
	cd tools/cni && go build -o $@ github.com/containernetworking/plugins/plugins/$(CNI_PKG_$*)

$(COREDNS):
	cd tools/coredns && go build -o $@ .

# The pause container of every pod sandbox, compiled from the kubernetes
# module's own source (no registry here).
$(PAUSE):
	cd tools/k8s && gcc -Os -static -Wall -Werror -DVERSION=$(K8S_VERSION) -o $@ $$(go list -m -f '{{.Dir}}' k8s.io/kubernetes)/build/pause/linux/pause.c

# The root filesystem of the database image: Debian bookworm with MariaDB
# 10.11, the only MySQL-family server Debian has. The local cluster wraps it
# as an image and imports it into containerd.
$(MARIADB_ROOTFS):
	mkdir -p $(dir $@)
	mmdebstrap --quiet --format=tar --variant=essential --include=mariadb-server,mariadb-client,mariadb-backup,netbase \
	  --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' \
	  --dpkgopt='path-exclude=/usr/share/locale/*' bookworm $@.tmp
	mv $@.tmp $@

##@ Flux (built from the Go module proxy into bin/, skipped when present; versions in tools/flux/go.mod)

.PHONY: flux
flux: $(FLUX) ## Build Flux's source-controller and kustomize-controller and copy their CRDs, for the Flux e2e test.

$(SOURCE_CONTROLLER) $(KUSTOMIZE_CONTROLLER):
	cd tools/flux && go build -o $@ github.com/fluxcd/$(notdir $@)

# The CRDs of the same module versions as the binaries, one file each.
$(FLUX_CRDS):
	rm -rf $@.tmp && mkdir -p $@.tmp
	cd tools/flux && for m in source-controller kustomize-controller; do \
	  cp $$(go list -m -f '{{.Dir}}' github.com/fluxcd/$$m)/config/crd/bases/*.yaml $@.tmp/; done
	chmod 0644 $@.tmp/*.yaml && mv $@.tmp $@
