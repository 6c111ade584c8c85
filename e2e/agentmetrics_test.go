package e2e

import (
	"context"
	"fmt"
	"net"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/example/mysql-operator/internal/scrape"
	"github.com/example/mysql-operator/internal/testenv"
)

// TestAgentMetrics scrapes the agents of a two-instance MySQL on the real
// node, as Prometheus would (the probes' port, in clear): the primary is
// writable with its replica acknowledging, the replica replicates; with
// the replica's applier stopped and rows written, its applier metric
// drops and the transactions it is behind grow.
func TestAgentMetrics(t *testing.T) {
	ns := testenv.NewNamespace(t, c.Client)
	createMySQL(t, ns, "db", 2)
	waitCurrent(t, key(ns, "db"))
	primary, replica := metricsURL(t, ns, "db-0"), metricsURL(t, ns, "db-1")
	expect := func(url, what string, want map[string]float64) {
		t.Helper()
		var last scrape.Families
		eventually(t, what, func(context.Context) (bool, error) {
			f, err := scrape.Get(url)
			if err != nil {
				return false, nil
			}
			last = f
			for name, v := range want {
				if got, ok := f.Value(name); !ok || got != v {
					return false, nil
				}
			}
			return true, nil
		})
		for name := range want {
			v, _ := last.Value(name)
			t.Logf("%s %s = %v", what, name, v)
		}
	}
	expect(primary, "the primary", map[string]float64{"mysql_up": 1, "mysql_read_only": 0, "mysql_replica": 0,
		"mysql_semisync_source_active": 1, "mysql_semisync_source_clients": 1})
	expect(replica, "the replica", map[string]float64{"mysql_up": 1, "mysql_read_only": 1, "mysql_replica": 1,
		"mysql_replica_io_running": 1, "mysql_replica_sql_running": 1, "mysql_replica_lag_seconds": 0,
		"mysql_replica_transactions_behind": 0, "mysql_semisync_replica_active": 1})

	root := podDB(t, ns, "db-1", "root", rootPasswordOf(t, ns, "db"))
	writer := rootDB(t, ns, "db", "db-primary")
	mustExec(t, writer, "CREATE DATABASE m")
	mustExec(t, writer, "CREATE TABLE m.t (n INT PRIMARY KEY)")
	// The operator starts an applier stopped without an error again at its
	// next check: each attempt stops it, writes 12 rows and scrapes at
	// once, until a scrape saw it stopped.
	seen := false
	for attempt := 0; attempt < 5 && !seen; attempt++ {
		mustExec(t, root, "STOP REPLICA SQL_THREAD")
		for n := range 12 {
			mustExec(t, writer, "INSERT INTO m.t VALUES (?)", attempt*100+n)
		}
		f, err := scrape.Get(replica)
		if err != nil {
			t.Fatal(err)
		}
		sqlRunning, _ := f.Value("mysql_replica_sql_running")
		behind, _ := f.Value("mysql_replica_transactions_behind")
		t.Logf("attempt %d: sql running %v, transactions behind %v", attempt, sqlRunning, behind)
		if sqlRunning == 0 {
			seen = true
			if behind < 12 {
				t.Errorf("with the applier stopped and 12 transactions written: %v transactions behind", behind)
			}
		}
	}
	if !seen {
		t.Fatal("no scrape saw the applier stopped: the operator started it again each time first")
	}
	_, _ = root.Exec("START REPLICA SQL_THREAD") // unless the operator did
	expect(replica, "the replica caught up", map[string]float64{"mysql_replica_sql_running": 1, "mysql_replica_transactions_behind": 0})
}

// metricsURL is the address of a pod's agent metrics.
func metricsURL(t *testing.T, ns, pod string) string {
	t.Helper()
	p := &corev1.Pod{}
	if err := c.Client.Get(context.Background(), key(ns, pod), p); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("http://%s/metrics", net.JoinHostPort(p.Status.PodIP, "9080"))
}
