package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/internal/testenv"
)

// TestIdleSQL counts what an idle 3-instance MySQL costs its servers: the
// packets the operator writes to them (mysql_operator_sql_round_trips_total)
// over several periodic checks, at most one round trip per instance per
// check. It waits until the MySQLs of other tests are gone, so that the
// manager's counters are this MySQL's alone.
func TestIdleSQL(t *testing.T) {
	ns := testenv.NewNamespace(t, c.Client)
	createMySQL(t, ns, "db", 3)
	waitCurrent(t, key(ns, "db"))
	// Deleting the other tests' namespaces (backups' finalizers, pods'
	// grace) can take longer than the usual deadline on a busy machine.
	testenv.Eventually(t, 6*time.Minute, "the other tests' MySQLs gone", func(ctx context.Context) (bool, error) {
		ms := &databasev1.MySQLList{}
		if err := c.Client.List(ctx, ms); err != nil {
			return false, err
		}
		return len(ms.Items) == 1, nil
	})
	// Bootstrap and replication may leave a second connection to a
	// server, and closing it when idle writes a packet. Count from the
	// steady state: one connection per server.
	eventually(t, "one connection per server", func(context.Context) (bool, error) {
		return sqlMetric(t, "mysql_operator_sql_connections") == 3, nil
	})
	const checks = 3
	rt0, rec0 := sqlRoundTrips(t), reconciles(t, manager)
	eventually(t, fmt.Sprintf("%d checks", checks), func(context.Context) (bool, error) {
		return reconciles(t, manager)-rec0 >= checks, nil
	})
	rt, rec := sqlRoundTrips(t)-rt0, reconciles(t, manager)-rec0
	perInstance := rt / rec / 3
	fmt.Printf("MEASURED SQL round trips per instance per idle check: %.2f (%v over %v checks of 3 instances)\n", perInstance, rt, rec)
	if perInstance > 1 {
		t.Errorf("%v round trips over %v checks of 3 instances: %.2f per instance per check, want at most 1", rt, rec, perInstance)
	}
}

// sqlRoundTrips reads the manager's count of packets written to servers.
func sqlRoundTrips(t *testing.T) float64 {
	t.Helper()
	return sqlMetric(t, "mysql_operator_sql_round_trips_total")
}

// sqlMetric reads one of the manager's metrics of its SQL connections.
func sqlMetric(t *testing.T, name string) float64 {
	t.Helper()
	ms, err := manager.Metrics()
	if err != nil {
		t.Fatal(err)
	}
	return ms.Sum(name, nil)
}
