package e2e

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/go-sql-driver/mysql"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/controller/vocabulary"
	"github.com/example/mysql-operator/internal/cluster"
	"github.com/example/mysql-operator/internal/testenv"
	"github.com/example/mysql-operator/internal/workload"
)

// errReadOnly is MariaDB's ER_OPTION_PREVENTS_STATEMENT: read_only.
const errReadOnly = 1290

// TestReplication makes a 3-instance MySQL: rows written through the
// primary's Service are read through the replicas' Service, and a write
// through the replicas' Service is refused, root's included.
func TestReplication(t *testing.T) {
	ns := testenv.NewNamespace(t, c.Client)
	createMySQL(t, ns, "db", 3)
	waitCurrent(t, key(ns, "db"))
	m := getMySQL(t, ns, "db")
	if m.Status.CurrentPrimary != "db-0" {
		t.Fatalf("primary = %q, want db-0 on a new cluster", m.Status.CurrentPrimary)
	}
	primary := rootDB(t, ns, "db", "db-primary")
	writeItems(t, primary)
	replicas := rootDB(t, ns, "db", "db-replicas")
	eventually(t, "the rows on the replicas", func(ctx context.Context) (bool, error) {
		var n int
		err := replicas.QueryRowContext(ctx, "SELECT COUNT(*) FROM shop.items").Scan(&n)
		return err == nil && n == 3, nil
	})
	_, err := replicas.Exec("INSERT INTO shop.items VALUES (4)")
	var me *mysql.MySQLError
	if !errors.As(err, &me) || me.Number != errReadOnly {
		t.Fatalf("a write through the replicas' Service: %v, want error %d (read-only)", err, errReadOnly)
	}
}

// getMySQL reads a MySQL.
func getMySQL(t *testing.T, ns, name string) *databasev1.MySQL {
	t.Helper()
	m := &databasev1.MySQL{}
	if err := c.Client.Get(context.Background(), key(ns, name), m); err != nil {
		t.Fatal(err)
	}
	return m
}

// writer is the workload's writer, with the helpers of the tests.
type writer struct{ *workload.Writer }

// startWriter creates shop.log on the primary and starts writing rows.
func startWriter(t *testing.T, ns, name string) *writer {
	t.Helper()
	w, err := workload.StartWriter(rootDB(t, ns, name, name+"-primary"))
	if err != nil {
		t.Fatal(err)
	}
	return &writer{w}
}

// count returns how many writes were acknowledged so far.
func (w *writer) count() int { return w.Count() }

// outage is the longest time between the ends of two acknowledged writes,
// and the number of refused attempts and the last refusal.
func (w *writer) outage() (time.Duration, int, error) { return w.Outage(time.Time{}, time.Time{}) }

// finish stops the writer once a write started after since was
// acknowledged, and checks that every acknowledged row is on the primary.
// It returns when that first write after since ended.
func (w *writer) finish(t *testing.T, ns, name string, since time.Time) time.Time {
	t.Helper()
	var first time.Time
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		var ok bool
		first, ok = w.Recovered(since)
		return ok, nil
	})
	if err != nil {
		_, refused, lastErr := w.outage()
		m := getMySQL(t, ns, name)
		t.Fatalf("no write acknowledged after the disruption: %v; %d refused, the last: %v; primary %q, instances %+v",
			err, refused, lastErr, m.Status.CurrentPrimary, m.Status.Instances)
	}
	w.Stop()
	lost, acked, err := w.Lost(rootDB(t, ns, name, name+"-primary"))
	if err != nil {
		t.Fatal(err)
	}
	if len(lost) > 0 {
		t.Fatalf("%d of %d acknowledged writes are not on the primary", len(lost), acked)
	}
	longest, refused, lastErr := w.outage()
	t.Logf("%d acknowledged writes, none lost; %d refused (last: %v); longest time between two acknowledged writes %s",
		acked, refused, lastErr, longest.Round(time.Millisecond))
	return first
}

// TestSwitchover asks for instance 1 as primary under a writer: the
// primary moves, no acknowledged write is lost, and the write pause is
// measured.
func TestSwitchover(t *testing.T) {
	ctx := context.Background()
	ns := testenv.NewNamespace(t, c.Client)
	m := createMySQL(t, ns, "db", 3)
	waitCurrent(t, key(ns, "db"))
	w := startWriter(t, ns, "db")
	eventually(t, "a few writes", func(context.Context) (bool, error) { return w.count() > 20, nil })
	patch := client.MergeFrom(m.DeepCopy())
	m.Spec.PreferredPrimary = ptrInt32(1)
	if err := c.Client.Patch(ctx, m, patch); err != nil {
		t.Fatal(err)
	}
	eventually(t, "db-1 to be the primary", func(ctx context.Context) (bool, error) {
		return getMySQL(t, ns, "db").Status.CurrentPrimary == "db-1", nil
	})
	waitCurrent(t, key(ns, "db"))
	w.finish(t, ns, "db", time.Now())
	pause, _, _ := w.outage()
	record(t, "switchover, longest write pause", pause)
}

// TestFailover loses the primary under a writer: its pod force-deleted and
// kept from coming back (a taint on the node), then, in a second case, its
// server killed (the kubelet restarts it in place, and the operator either
// waits for it or fails over, by the grace period). A primary takes
// writes again, every acknowledged write is on it, and the time from the
// kill to the first accepted write is measured. An old primary that
// returns holding a transaction its replicas never acknowledged is errant:
// that is reported, not repaired.
func TestFailover(t *testing.T) {
	for _, how := range []string{"pod force-deleted", "server killed"} {
		t.Run(how, func(t *testing.T) {
			ctx := context.Background()
			ns := testenv.NewNamespace(t, c.Client)
			createMySQL(t, ns, "db", 3)
			waitCurrent(t, key(ns, "db"))
			w := startWriter(t, ns, "db")
			eventually(t, "a few writes", func(context.Context) (bool, error) { return w.count() > 20, nil })
			pod := &corev1.Pod{}
			if err := c.Client.Get(ctx, key(ns, "db-0"), pod); err != nil {
				t.Fatal(err)
			}
			if how == "pod force-deleted" {
				holdNode(t, true)
				if err := c.Client.Delete(ctx, pod, client.GracePeriodSeconds(0)); err != nil {
					t.Fatal(err)
				}
			}
			// The kill: the server's processes gone at once (a force-deleted
			// pod's containers die when the kubelet gets to them, which may
			// be first).
			if err := c.KillContainer(pod, "mysql"); err != nil && how == "server killed" {
				t.Fatal(err)
			}
			killed := time.Now()
			first := w.finish(t, ns, "db", killed)
			took := first.Sub(killed)
			t.Logf("%s: first write accepted %s after the kill; primary now %s", how, took.Round(time.Millisecond), getMySQL(t, ns, "db").Status.CurrentPrimary)
			record(t, "failover ("+how+"), kill to first accepted write", took)
			if how == "pod force-deleted" {
				m := getMySQL(t, ns, "db")
				if f := m.Status.LastFailover; f == nil || f.From != "db-0" || f.To != m.Status.CurrentPrimary {
					t.Errorf("status.lastFailover %+v, primary %s", f, m.Status.CurrentPrimary)
				}
				out := kubectlMySQL(t, ns, "", "status", "db")
				if !strings.Contains(out, "Last failover:   db-0 -> "+m.Status.CurrentPrimary) ||
					!regexp.MustCompile(`(?m)^\S+ `+m.Status.CurrentPrimary+`\s+Primary\s`).MatchString(out) {
					t.Errorf("kubectl mysql status after the failover:\n%s", out)
				}
			}
			holdNode(t, false)
			waitSettled(t, ns, "db")
		})
	}
}

// holdNode taints the real node so that no new pod starts there (running
// pods stay), or removes that taint.
func holdNode(t *testing.T, hold bool) {
	t.Helper()
	args := []string{"taint", "node", cluster.RealNodeName, "e2e.example.com/hold=true:NoSchedule"}
	if !hold {
		args[len(args)-1] = "e2e.example.com/hold:NoSchedule-"
		if out, err := kubectlErr(args...); err != nil && !strings.Contains(out, "not found") {
			t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return
	}
	kubectl(t, args...)
	t.Cleanup(func() { _, _ = kubectlErr("taint", "node", cluster.RealNodeName, "e2e.example.com/hold:NoSchedule-") })
}

// waitSettled waits until the MySQL is Current, or Stalled only because
// instances hold errant transactions (an old primary that returned with a
// write nobody acknowledged), and checks a primary takes writes.
func waitSettled(t *testing.T, ns, name string) {
	t.Helper()
	eventually(t, "the MySQL to settle", func(ctx context.Context) (bool, error) {
		res, err := testenv.Kstatus(ctx, c.Client, key(ns, name))
		if err != nil {
			return false, err
		}
		if res.Status == status.CurrentStatus {
			return true, nil
		}
		s := condition(getMySQL(t, ns, name), databasev1.ConditionStalled)
		return s != nil && s.Status == metav1.ConditionTrue && s.Reason == vocabulary.ReasonErrantTransactions, nil
	})
	m := getMySQL(t, ns, name)
	for _, in := range m.Status.Instances {
		t.Logf("instance %s: %s, ready %t %s", in.Name, in.Role, in.Ready, in.Message)
	}
	mustExec(t, rootDB(t, ns, name, name+"-primary"), "INSERT INTO shop.log VALUES (1000000)")
}

func ptrInt32(v int32) *int32 { return &v }

// record logs a measured figure in a form docs/benchmarks.md quotes.
func record(t *testing.T, what string, d time.Duration) {
	t.Helper()
	fmt.Printf("MEASURED %s: %s\n", what, d.Round(time.Millisecond))
}
