package cluster

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/example/mysql-operator/internal/testenv"
)

// BuildManager compiles cmd/manager into dir and returns the binary's path.
func BuildManager(dir string) (string, error) {
	root, err := testenv.RepoRoot()
	if err != nil {
		return "", err
	}
	out := filepath.Join(dir, "manager")
	cmd := exec.Command("go", "build", "-o", out, "./cmd/manager")
	cmd.Dir = root
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/manager: %w\n%s", err, msg)
	}
	return out, nil
}

// Manager is one running operator process.
type Manager struct {
	// Name is the process name; its log is LogPath(Name).
	Name string
	// MetricsURL serves the manager's Prometheus metrics over plain HTTP.
	MetricsURL string
}

// StartManager runs the manager binary as the operator's user, with
// metrics on a free local port, and waits for its health probe.
func (c *Cluster) StartManager(ctx context.Context, name, binary string, extraArgs ...string) (*Manager, error) {
	metrics, err := freePort()
	if err != nil {
		return nil, err
	}
	probe, err := freePort()
	if err != nil {
		return nil, err
	}
	args := append([]string{"--kubeconfig=" + c.OperatorKubeconfig,
		"--metrics-bind-address=127.0.0.1:" + strconv.Itoa(metrics), "--metrics-secure=false",
		"--health-probe-bind-address=127.0.0.1:" + strconv.Itoa(probe),
		"--leader-election-namespace=mysql-operator-system"}, extraArgs...)
	if err := c.startProcess(name, binary, args...); err != nil {
		return nil, err
	}
	if err := c.waitHTTP(ctx, name, "http://127.0.0.1:"+strconv.Itoa(probe)+"/readyz", nil); err != nil {
		return nil, fmt.Errorf("manager %s: %w (log: %s)", name, err, c.LogPath(name))
	}
	return &Manager{Name: name, MetricsURL: "http://127.0.0.1:" + strconv.Itoa(metrics) + "/metrics"}, nil
}

// StopProcess stops a process the cluster started, gracefully.
func (c *Cluster) StopProcess(name string) { c.stopProcess(name) }

// Kill kills a process the cluster started with SIGKILL, as a crash would.
func (c *Cluster) Kill(name string) {
	p := c.procs[name]
	if p == nil {
		return
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
	}
	delete(c.procs, name)
}

// Pid returns the process id of a running process, 0 when none.
func (c *Cluster) Pid(name string) int {
	if p := c.procs[name]; p != nil {
		return p.cmd.Process.Pid
	}
	return 0
}
