package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/controller/vocabulary"
	"github.com/example/mysql-operator/internal/testenv"
)

// TestNodeLoss cuts the network of database pods under a writer, as a
// lost node or a partition does: packets dropped inside the pods' own
// network namespaces, then healed.
//
// With the primary cut, the operator fails over, no acknowledged write is
// lost, and the old primary, healed, rejoins as a replica without an
// errant transaction: the write it took but never had acknowledged when it
// was cut off is rolled back. With the primary and a replica cut, two of
// three, no failover may happen (the replica left may lack the last
// acknowledged write): the status says why, and once healed the writes go
// on, none lost. In both, the cut primary's agent fences it during the
// cut: its server restarts in place, read-only, while still cut off.
func TestNodeLoss(t *testing.T) {
	t.Run("primary cut", func(t *testing.T) {
		ns := testenv.NewNamespace(t, c.Client)
		createMySQL(t, ns, "db", 3)
		waitCurrent(t, key(ns, "db"))
		w := startWriter(t, ns, "db")
		eventually(t, "a few writes", func(context.Context) (bool, error) { return w.count() > 20, nil })
		before := serverProcesses(t, ns, "db-0")
		heal := cutNetwork(t, ns, "db-0")
		cut := time.Now()
		first := waitRecovered(t, w, cut)
		t.Logf("primary cut: first write acknowledged %s after the cut; primary now %s",
			first.Sub(cut).Round(time.Millisecond), getMySQL(t, ns, "db").Status.CurrentPrimary)
		record(t, "node loss (the primary's network cut), cut to first acknowledged write", first.Sub(cut))
		w.logAttempts(t, cut, first)
		waitFenced(t, ns, "db-0", before, cut)
		if err := heal(); err != nil {
			t.Fatal(err)
		}
		// The old primary's first answer once healed: read-only.
		if ro := firstReadOnly(t, ns, "db-0"); !ro {
			t.Error("the old primary, healed, was writable: its agent had not fenced it")
		}
		waitCurrent(t, key(ns, "db"))
		m := getMySQL(t, ns, "db")
		for _, in := range m.Status.Instances {
			if in.Role == databasev1.RoleErrant || !in.Ready {
				t.Errorf("after healing, instance %s is %s, ready %t: %s", in.Name, in.Role, in.Ready, in.Message)
			}
		}
		w.finish(t, ns, "db", time.Now())
	})
	t.Run("primary and a replica cut", func(t *testing.T) {
		ns := testenv.NewNamespace(t, c.Client)
		createMySQL(t, ns, "db", 3)
		waitCurrent(t, key(ns, "db"))
		w := startWriter(t, ns, "db")
		eventually(t, "a few writes", func(context.Context) (bool, error) { return w.count() > 20, nil })
		before := serverProcesses(t, ns, "db-0")
		heals := []func() error{cutNetwork(t, ns, "db-0"), cutNetwork(t, ns, "db-1")}
		cut := time.Now()
		// Asserting that something does not happen needs a window: the
		// failover grace and two periodic checks.
		window := time.Now().Add(25 * time.Second)
		var said string
		for time.Now().Before(window) {
			m := getMySQL(t, ns, "db")
			if m.Status.CurrentPrimary != "db-0" {
				t.Fatalf("failed over to %s with two of three instances cut", m.Status.CurrentPrimary)
			}
			if r := condition(m, databasev1.ConditionReconciling); r != nil && strings.Contains(r.Message, "no failover") {
				said = r.Message
			}
			time.Sleep(200 * time.Millisecond) // sampling the status during the window
		}
		if said == "" {
			t.Errorf("the status never said why it does not fail over: %+v", getMySQL(t, ns, "db").Status.Conditions)
		}
		t.Logf("status during the cut: %s", said)
		// Fenced even with no failover: the operator makes it writable
		// again once it reaches it.
		waitFenced(t, ns, "db-0", before, cut)
		healed := time.Now()
		for _, heal := range heals {
			if err := heal(); err != nil {
				t.Fatal(err)
			}
		}
		w.finish(t, ns, "db", healed)
		waitCurrent(t, key(ns, "db"))
		// The primary after healing is db-0, or a replica that had received
		// a transaction db-0's fencing rolled back (never acknowledged: the
		// acknowledgement was lost in the cut), failed over to once healed.
		if m := getMySQL(t, ns, "db"); m.Status.CurrentPrimary != "db-0" {
			if f := m.Status.LastFailover; f == nil || f.Time.Time.Before(healed.Truncate(time.Second)) {
				t.Errorf("primary %s after healing, want db-0 or a failover after healing: last failover %+v", m.Status.CurrentPrimary, f)
			}
			t.Logf("after healing, failed over to %s, which had received a transaction db-0 rolled back", m.Status.CurrentPrimary)
		}
		if s := condition(getMySQL(t, ns, "db"), databasev1.ConditionStalled); s != nil && s.Status == metav1.ConditionTrue &&
			s.Reason == vocabulary.ReasonErrantTransactions {
			t.Errorf("errant instances after healing: %s", s.Message)
		}
	})
}

// serverProcesses are the processes of pod name's server container and
// when they started.
func serverProcesses(t *testing.T, ns, name string) map[int]time.Time {
	t.Helper()
	pod := &corev1.Pod{}
	if err := c.Client.Get(context.Background(), key(ns, name), pod); err != nil {
		t.Fatal(err)
	}
	starts, err := c.ProcessStarts(pod, "mysql")
	if err != nil {
		t.Fatal(err)
	}
	return starts
}

// waitFenced waits until the server of pod name, a primary cut off since
// cut, has been fenced by its agent: crashed, and started again in place
// (a new process in the same container, read-only) while still cut off.
func waitFenced(t *testing.T, ns, name string, before map[int]time.Time, cut time.Time) {
	t.Helper()
	var started time.Time
	eventually(t, name+" fenced by its agent during the cut", func(context.Context) (bool, error) {
		for pid, at := range serverProcesses(t, ns, name) {
			if _, old := before[pid]; !old {
				started = at
				return true, nil
			}
		}
		return false, nil
	})
	pod := &corev1.Pod{}
	if err := c.Client.Get(context.Background(), key(ns, name), pod); err != nil {
		t.Fatal(err)
	}
	for _, s := range pod.Status.ContainerStatuses {
		if s.Name == "mysql" && s.RestartCount != 0 {
			t.Errorf("the kubelet restarted %s's server container %d times: the fence restarts it in place", name, s.RestartCount)
		}
	}
	// /proc gives the start to the second.
	t.Logf("%s fenced by its agent: its server started again in place at %s, %s after the cut", name,
		started.UTC().Format(time.RFC3339), started.Sub(cut).Round(time.Second))
}

// firstReadOnly says whether the first answer of pod name's server (just
// healed) to @@read_only is read-only.
func firstReadOnly(t *testing.T, ns, name string) bool {
	t.Helper()
	var ro bool
	eventually(t, name+" answers", func(ctx context.Context) (bool, error) {
		return adminDB(t, ns, "db", name).QueryRowContext(ctx, "SELECT @@read_only").Scan(&ro) == nil, nil
	})
	return ro
}

// cutNetwork cuts the network of pod name in ns, and heals it when the
// test ends if it has not been healed before.
func cutNetwork(t *testing.T, ns, name string) func() error {
	t.Helper()
	pod := &corev1.Pod{}
	if err := c.Client.Get(context.Background(), key(ns, name), pod); err != nil {
		t.Fatal(err)
	}
	heal, err := c.CutNetwork(pod, "agent") // the agent runs for the pod's life
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = heal() })
	return heal
}

// waitRecovered waits until a write started after since was acknowledged
// and returns when it ended.
func waitRecovered(t *testing.T, w *writer, since time.Time) time.Time {
	t.Helper()
	var first time.Time
	eventually(t, "a write acknowledged after the disruption", func(context.Context) (bool, error) {
		var ok bool
		first, ok = w.Recovered(since)
		return ok, nil
	})
	return first
}

// logAttempts logs the writer's attempts that ended between from and to,
// in seconds from from: where a disruption's time went, as a client saw it.
func (w *writer) logAttempts(t *testing.T, from, to time.Time) {
	t.Helper()
	for _, a := range w.Attempts(from, to) {
		t.Logf("attempt %+.2fs..%+.2fs: %v", a.Start.Sub(from).Seconds(), a.End.Sub(from).Seconds(), a.Err)
	}
}
