package soak

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1 "github.com/example/mysql-operator/api/v1"
)

// fault is one kind of trouble a round injects; inject returns the pod it
// hit ("" for none).
type fault struct {
	name   string
	inject func(ctx context.Context, s *soak, m *databasev1.MySQL) (string, error)
}

// cutFor is how long a network cut lasts: past the failover grace, short
// of the kubelet's liveness limit (a minute).
const cutFor = 15 * time.Second

// faults are the kinds a round picks from.
var faults = []fault{
	{"primary-killed", func(ctx context.Context, s *soak, m *databasev1.MySQL) (string, error) {
		return m.Status.CurrentPrimary, s.kill(ctx, m.Status.CurrentPrimary)
	}},
	{"replica-killed", func(ctx context.Context, s *soak, m *databasev1.MySQL) (string, error) {
		r := s.replica(m)
		return r, s.kill(ctx, r)
	}},
	{"primary-cut", func(ctx context.Context, s *soak, m *databasev1.MySQL) (string, error) {
		return m.Status.CurrentPrimary, s.cut(ctx, m.Status.CurrentPrimary)
	}},
	{"manager-killed-mid-switchover", func(ctx context.Context, s *soak, m *databasev1.MySQL) (string, error) {
		to := s.replica(m)
		if err := s.switchover(ctx, m, to); err != nil {
			return to, err
		}
		// Mid-action: the manager acts on the change within tens of
		// milliseconds, and a switchover takes about a second.
		time.Sleep(time.Duration(s.rng.IntN(800)) * time.Millisecond) // a random moment of the action, not a wait for it
		s.manager.Crash()
		return to, s.primaryIs(ctx, to)
	}},
	{"switchover", func(ctx context.Context, s *soak, m *databasev1.MySQL) (string, error) {
		to := s.replica(m)
		if err := s.switchover(ctx, m, to); err != nil {
			return to, err
		}
		return to, s.primaryIs(ctx, to)
	}},
}

// replica picks one of m's replicas at random.
func (s *soak) replica(m *databasev1.MySQL) string {
	var rs []string
	for _, in := range m.Status.Instances {
		if in.Name != m.Status.CurrentPrimary {
			rs = append(rs, in.Name)
		}
	}
	return rs[s.rng.IntN(len(rs))]
}

// pod reads a pod of the MySQL.
func (s *soak) pod(ctx context.Context, name string) (*corev1.Pod, error) {
	p := &corev1.Pod{}
	return p, s.c.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, p)
}

// kill kills the server of pod with SIGKILL, as an out-of-memory kill or
// a crash would, and waits until the kubelet has started it again.
func (s *soak) kill(ctx context.Context, name string) error {
	p, err := s.pod(ctx, name)
	if err != nil {
		return err
	}
	before := restarts(p)
	if err := s.c.KillContainer(p, "mysql"); err != nil {
		return err
	}
	return s.until(ctx, name+" restarted", func() bool {
		p, err := s.pod(ctx, name)
		return err == nil && restarts(p) > before
	})
}

// restarts is how often the server's container of p restarted.
func restarts(p *corev1.Pod) int32 {
	for _, c := range p.Status.ContainerStatuses {
		if c.Name == "mysql" {
			return c.RestartCount
		}
	}
	return 0
}

// until polls cond every 100 ms for s.opts.Converge.
func (s *soak) until(ctx context.Context, what string, cond func() bool) error {
	ctx, cancel := context.WithTimeout(ctx, s.opts.Converge)
	defer cancel()
	for !cond() {
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: %w", what, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
	return nil
}

// cut drops the packets of pod for cutFor, then heals it.
func (s *soak) cut(ctx context.Context, name string) error {
	p, err := s.pod(ctx, name)
	if err != nil {
		return err
	}
	// Through the agent, which runs for the pod's life (the server may be
	// restarting, fenced or in back-off).
	heal, err := s.c.CutNetwork(p, "agent")
	if err != nil {
		return err
	}
	select {
	case <-ctx.Done():
	case <-time.After(cutFor):
	}
	return heal()
}

// switchover asks for pod as the primary, through spec.preferredPrimary.
func (s *soak) switchover(ctx context.Context, m *databasev1.MySQL, pod string) error {
	var i int32
	if _, err := fmt.Sscanf(pod, name+"-%d", &i); err != nil {
		return err
	}
	patch := client.MergeFrom(m.DeepCopy())
	m.Spec.PreferredPrimary = &i
	return s.c.Client.Patch(ctx, m, patch)
}

// primaryIs waits until status says pod is the primary.
func (s *soak) primaryIs(ctx context.Context, pod string) error {
	return s.until(ctx, "primary "+pod, func() bool {
		m := &databasev1.MySQL{}
		err := s.c.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, m)
		return err == nil && m.Status.CurrentPrimary == pod
	})
}
