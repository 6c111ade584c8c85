package dbop

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/example/mysql-operator/internal/dbtest"
	"github.com/example/mysql-operator/topology"
)

// TestCrashRecoveryAsReplica: a MariaDB primary that crashes while a commit
// waits for its acknowledgement, and restarts with --init-rpl-role=SLAVE
// (as the agent starts a server it crashed to discard what no replica
// acknowledged), rolls that commit back and truncates its binary log
// (MDEV-21117, MDEV-33465): as an old primary after a failover, it then
// rejoins without an errant transaction. What was acknowledged stays; a
// restart without the option commits the waiting transaction instead.
func TestCrashRecoveryAsReplica(t *testing.T) {
	ctx := context.Background()
	boot, err := MariaDB.Bootstrap(testPasswords)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, pool: NewPool(Options{})}
	t.Cleanup(func() { _ = e.pool.Close() })
	for _, s := range dbtest.Start(t, 2, dbtest.Config{Bootstrap: boot}) {
		e.add(s)
	}
	if err := e.ins[0].Promote(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := e.ins[1].ConfigureReplica(ctx, e.source(0), true); err != nil {
		t.Fatal(err)
	}
	mustRoot := func(sql string) {
		t.Helper()
		if _, err := e.root(0).ExecContext(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	mustRoot("CREATE DATABASE app")
	mustRoot("CREATE TABLE app.t (id INT PRIMARY KEY, v VARCHAR(20))")
	mustRoot("INSERT INTO app.t VALUES (1, 'acknowledged')")
	e.waitRows(1, 1)
	lost := e.blockCommit(ctx, 0, []int{1})

	e.servers[0].Kill()
	if err := e.servers[0].StartWith("--init-rpl-role=SLAVE"); err != nil {
		t.Fatal(err)
	}
	var st *Status
	eventually(t, 30*time.Second, "the crashed primary answers", func() error {
		var err error
		st, err = e.ins[0].Status(ctx)
		return err
	})
	if contains(st.GTIDBinlogState, lost) {
		t.Errorf("the crashed primary kept its unacknowledged transaction %s: binlog state %s", lost, st.GTIDBinlogState)
	}
	var n int
	if err := e.root(0).QueryRowContext(ctx, "SELECT COUNT(*) FROM app.t WHERE id = 999").Scan(&n); err != nil || n != 0 {
		t.Errorf("the unacknowledged row: %d, %v; want rolled back", n, err)
	}
	if err := e.root(0).QueryRowContext(ctx, "SELECT COUNT(*) FROM app.t WHERE id = 1").Scan(&n); err != nil || n != 1 {
		t.Errorf("the acknowledged row: %d, %v; want kept", n, err)
	}
	// It rejoins as a replica of the one that stayed, errant-free.
	if err := e.ins[1].Promote(ctx, 1); err != nil {
		t.Fatal(err)
	}
	c, p := e.decide(ctx, topology.Cluster{CurrentPrimary: 1, RequestedPrimary: -1, FailoverGrace: time.Minute, MaxLag: time.Minute})
	if len(p.Errant) != 0 {
		t.Fatalf("errant %v after the crash recovery: %s", p.Errant, fmt.Sprint(c.Instances[0].Executed))
	}
}
