// Package e2e runs the operator the way a cluster would: on a full local
// cluster (internal/cluster) with the StatefulSet, garbage-collector and
// disruption controllers, a scheduler, a real kubelet node where the
// database servers run, and KWOK nodes for what needs no server, installed
// from the dev overlay the GitOps way, the manager running as its own
// RBAC-bound user.
package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap/zapcore"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/example/mysql-operator/internal/cluster"
	"github.com/example/mysql-operator/internal/testenv"
)

var (
	// c is the cluster every test of the package shares.
	c *cluster.Cluster
	// managerBin is the manager binary built from cmd/manager.
	managerBin string
	// manager is the manager process the tests currently rely on.
	manager *cluster.Manager
	// repoRoot is the root of the repository.
	repoRoot string
)

// managerArgs are the flags of every manager of the tests: leader
// election, and a short --stall-after so that a stuck pod stalls its MySQL
// within a test's wait.
var managerArgs = []string{"--leader-elect", "--stall-after=" + stallAfter.String(), "--zap-time-encoding=rfc3339nano"}

// stallAfter is the managers' --stall-after.
const stallAfter = 20 * time.Second

// timeout bounds each wait of the e2e tests.
const timeout = 2 * time.Minute

func TestMain(m *testing.M) {
	// The test clients log only their errors.
	ctrl.SetLogger(zap.New(zap.Level(zapcore.ErrorLevel)))
	code, err := run(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e setup:", err)
		os.Exit(1)
	}
	os.Exit(code)
}

func run(m *testing.M) (int, error) {
	// An interrupt (^C, a CI job's SIGTERM) fails a start-up in progress,
	// which tears down what it made, or stops the running cluster: the real
	// node's namespace, mounts and cgroups do not outlive the tests. The
	// context is never cancelled otherwise.
	ctx, _ := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	var err error
	if repoRoot, err = testenv.RepoRoot(); err != nil {
		return 0, err
	}
	dir, err := os.MkdirTemp("", "mysql-operator-e2e-")
	if err != nil {
		return 0, err
	}
	c, err = cluster.Start(ctx, cluster.Options{Dir: dir, Progress: os.Stderr, RealNode: true, Nodes: 3})
	if err != nil {
		return 0, err
	}
	var once sync.Once
	stop := func() { once.Do(c.Stop) }
	defer stop()
	go func() {
		<-ctx.Done()
		fmt.Fprintln(os.Stderr, "e2e interrupted: stopping the cluster; component logs are in", filepath.Join(dir, "logs"))
		stop()
		os.Exit(1)
	}()
	if managerBin, err = cluster.BuildManager(dir); err != nil {
		return 0, err
	}
	// Install the operator the GitOps way, as Flux does: the dev overlay
	// server-side applied under a field manager of its own.
	if err := c.InstallOperator(ctx, repoRoot, "kustomize-controller"); err != nil {
		return 0, err
	}
	if manager, err = c.StartManager(ctx, "manager-a", managerBin, managerArgs...); err != nil {
		return 0, err
	}
	code := m.Run()
	// Stopped before its directory goes: a running kubelet would make
	// node/kubelet again.
	stop()
	switch {
	case code != 0:
		fmt.Fprintln(os.Stderr, "e2e failed; component logs are in", filepath.Join(dir, "logs"))
	case os.Getenv("E2E_KEEP_LOGS") != "":
		fmt.Fprintln(os.Stderr, "component logs are in", filepath.Join(dir, "logs"))
	default:
		_ = os.RemoveAll(dir)
	}
	return code, nil
}

// kubectl runs bin/kubectl as the cluster admin.
func kubectl(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command(filepath.Join(repoRoot, "bin", "kubectl"), append([]string{"--kubeconfig", c.Kubeconfig}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// kubectlErr runs bin/kubectl as the cluster admin and returns its output.
func kubectlErr(args ...string) (string, error) {
	out, err := exec.Command(filepath.Join(repoRoot, "bin", "kubectl"), append([]string{"--kubeconfig", c.Kubeconfig}, args...)...).CombinedOutput()
	return string(out), err
}

// reconciles scrapes a manager's count of MySQL reconciles.
func reconciles(t *testing.T, m *cluster.Manager) float64 {
	t.Helper()
	ms, err := m.Metrics()
	if err != nil {
		t.Fatal(err)
	}
	return ms.Sum("controller_runtime_reconcile_total", map[string]string{"controller": "mysql"})
}

func eventually(t *testing.T, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	testenv.Eventually(t, timeout, what, cond)
}

func key(ns, name string) client.ObjectKey { return client.ObjectKey{Namespace: ns, Name: name} }

// clusterBuild builds a kustomize directory of the repository.
func clusterBuild(dir string) ([]*unstructured.Unstructured, error) {
	return cluster.Build(filepath.Join(repoRoot, dir))
}

// clusterApply applies objects as a GitOps tool would.
func clusterApply(objs []*unstructured.Unstructured) error {
	return cluster.Apply(context.Background(), c.Client, "kustomize-controller", objs)
}
