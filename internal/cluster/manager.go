package cluster

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/example/mysql-operator/internal/testenv"
)

// BuildManager compiles cmd/manager into dir, with the flags of the
// Dockerfile and `make build`, and returns the binary's path.
func BuildManager(dir string) (string, error) {
	return buildCommand(context.Background(), dir, "manager")
}

// Manager is one operator process, supervised as a pod's container would
// be: when it exits (a crash, or a lost leader election) it is started
// again after a second, until Stop.
type Manager struct {
	// Name of the manager; its log is the cluster's LogPath(Name).
	Name string
	// MetricsURL serves the manager's Prometheus metrics over plain HTTP.
	MetricsURL string
	// pprofURL serves the manager's Go profiles, used to force a collection.
	pprofURL string

	mu       sync.Mutex
	current  *process
	stopped  bool
	loopDone chan struct{}
}

// StartManager runs the manager binary as the operator's user, with
// metrics and pprof on free local ports, and waits for its health probe.
func (c *Cluster) StartManager(ctx context.Context, name, binary string, extraArgs ...string) (*Manager, error) {
	return c.StartManagerEnv(ctx, name, binary, nil, extraArgs...)
}

// StartManagerEnv is StartManager with env added to the manager's
// environment (GOMEMLIMIT, as a container's limit would give it).
func (c *Cluster) StartManagerEnv(ctx context.Context, name, binary string, env []string, extraArgs ...string) (*Manager, error) {
	metrics, err := testenv.FreePort()
	if err != nil {
		return nil, err
	}
	probe, err := testenv.FreePort()
	if err != nil {
		return nil, err
	}
	pprof, err := testenv.FreePort()
	if err != nil {
		return nil, err
	}
	args := append([]string{"--kubeconfig=" + c.OperatorKubeconfig,
		"--metrics-bind-address=127.0.0.1:" + strconv.Itoa(metrics), "--metrics-secure=false",
		"--health-probe-bind-address=127.0.0.1:" + strconv.Itoa(probe),
		"--pprof-bind-address=127.0.0.1:" + strconv.Itoa(pprof),
		"--leader-election-namespace=mysql-operator-system", "--agent-image=" + AgentImage}, extraArgs...)
	first, err := launchEnv(c.LogPath(name), env, binary, args...)
	if err != nil {
		return nil, err
	}
	m := &Manager{Name: name, MetricsURL: "http://127.0.0.1:" + strconv.Itoa(metrics) + "/metrics",
		pprofURL: "http://127.0.0.1:" + strconv.Itoa(pprof) + "/debug/pprof", current: first, loopDone: make(chan struct{})}
	go m.supervise(c.LogPath(name), env, binary, args)
	c.managers = append(c.managers, m)
	if err := waitHTTP(ctx, first, "http://127.0.0.1:"+strconv.Itoa(probe)+"/readyz", nil); err != nil {
		return nil, fmt.Errorf("manager %s: %w (log: %s)", name, err, c.LogPath(name))
	}
	return m, nil
}

// supervise restarts the manager whenever it exits, until Stop.
func (m *Manager) supervise(logPath string, env []string, binary string, args []string) {
	defer close(m.loopDone)
	for {
		<-m.process().done
		m.mu.Lock()
		if m.stopped {
			m.mu.Unlock()
			return
		}
		m.mu.Unlock()
		time.Sleep(time.Second) // restart back-off, as a kubelet's
		next, err := launchEnv(logPath, env, binary, args...)
		m.mu.Lock()
		if err != nil || m.stopped {
			m.mu.Unlock()
			if next != nil {
				next.signal(syscall.SIGKILL)
			}
			return
		}
		m.current = next
		m.mu.Unlock()
	}
}

// process returns the running manager process, the latest the supervisor
// started.
func (m *Manager) process() *process {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.current
}

// Crash kills the running manager process with SIGKILL; the supervisor
// starts it again, as a kubelet restarts a crashed container.
func (m *Manager) Crash() {
	p := m.process()
	p.signal(syscall.SIGKILL)
	<-p.done
}

// Kill kills the manager with SIGKILL and does not restart it, as when its
// node dies.
func (m *Manager) Kill() { m.halt(syscall.SIGKILL) }

// Stop stops the manager gracefully and does not restart it.
func (m *Manager) Stop() { m.halt(syscall.SIGTERM) }

func (m *Manager) halt(sig syscall.Signal) {
	m.mu.Lock()
	if m.stopped {
		m.mu.Unlock()
		return
	}
	m.stopped = true
	p := m.current
	m.mu.Unlock()
	p.stop(sig)
	<-m.loopDone
}
