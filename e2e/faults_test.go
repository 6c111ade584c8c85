package e2e

import (
	"context"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/example/mysql-operator/internal/testenv"
)

// leaseName is the manager's leader election Lease (see cmd/manager).
const leaseName = "mysql-operator.database.example.com"

func rootPassword(ctx context.Context, ns string) (string, error) {
	s := &corev1.Secret{}
	if err := c.Client.Get(ctx, key(ns, "db-root"), s); err != nil {
		return "", err
	}
	return string(s.Data["password"]), nil
}

// TestManagerCrashMidRollout kills the manager while a MySQL rolls out; it is
// started again as a kubelet would: the MySQL converges and its password is
// unchanged.
func TestManagerCrashMidRollout(t *testing.T) {
	ctx := context.Background()
	ns := testenv.NewNamespace(t, c.Client)
	createMySQL(t, ns, "db", 3)
	var password string
	eventually(t, "the root Secret", func(ctx context.Context) (bool, error) {
		var err error
		password, err = rootPassword(ctx, ns)
		return err == nil, client.IgnoreNotFound(err)
	})
	manager.Crash()
	// A killed leader does not release its Lease: the new process waits
	// for it to expire before it reconciles.
	testenv.WaitKstatus(t, c.Client, key(ns, "db"), "Current", timeout)
	got, err := rootPassword(ctx, ns)
	if err != nil {
		t.Fatal(err)
	}
	if got != password {
		t.Fatal("the root password changed across a manager crash")
	}
}

// TestAPIServerRestart restarts kube-apiserver: the manager reconnects (or,
// having lost its lease, exits and is restarted as a pod would be) and
// converges a MySQL created afterwards.
func TestAPIServerRestart(t *testing.T) {
	ctx := context.Background()
	if err := c.RestartAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	ns := testenv.NewNamespace(t, c.Client)
	createMySQL(t, ns, "db", 2)
	waitCurrent(t, key(ns, "db"))
}

// TestLeaderElection runs two managers: only the leader reconciles, and
// killing it hands over to the other within the lease time.
func TestLeaderElection(t *testing.T) {
	ctx := context.Background()
	eventually(t, "a leader", func(ctx context.Context) (bool, error) {
		lease := &coordinationv1.Lease{}
		err := c.Client.Get(ctx, key("mysql-operator-system", leaseName), lease)
		return err == nil && lease.Spec.HolderIdentity != nil, client.IgnoreNotFound(err)
	})
	standby, err := c.StartManager(ctx, "manager-b", managerBin, managerArgs...)
	if err != nil {
		t.Fatal(err)
	}
	ns := testenv.NewNamespace(t, c.Client)
	createMySQL(t, ns, "one", 1)
	waitCurrent(t, key(ns, "one"))
	if n := reconciles(t, standby); n != 0 {
		t.Fatalf("the standby manager reconciled %v times while the leader ran", n)
	}
	if reconciles(t, manager) == 0 {
		t.Fatal("the leader did not reconcile")
	}

	lease := &coordinationv1.Lease{}
	if err := c.Client.Get(ctx, key("mysql-operator-system", leaseName), lease); err != nil {
		t.Fatal(err)
	}
	holder := *lease.Spec.HolderIdentity
	killed := time.Now()
	manager.Kill()
	manager = standby
	createMySQL(t, ns, "two", 1)
	// The lease lasts 15 s and is retried every 2 s (controller-runtime's defaults).
	testenv.Eventually(t, 30*time.Second, "the standby to take the lease", func(ctx context.Context) (bool, error) {
		err := c.Client.Get(ctx, key("mysql-operator-system", leaseName), lease)
		return err == nil && lease.Spec.HolderIdentity != nil && *lease.Spec.HolderIdentity != holder, err
	})
	t.Logf("handover took %s", time.Since(killed).Round(100*time.Millisecond))
	waitCurrent(t, key(ns, "two"))
	if reconciles(t, standby) == 0 {
		t.Fatal("the new leader did not reconcile")
	}
}
