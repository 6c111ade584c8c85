package dbop

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/example/mysql-operator/internal/dbtest"
	"github.com/example/mysql-operator/topology"
)

// TestSeedMariaDBBackup seeds an empty instance joining a cluster with data from a
// replica, with mariadb-backup as the agent user, then restores the GTID state
// through dbop and replicates without a duplicate key.
func TestSeedMariaDBBackup(t *testing.T) {
	e := startEnv(t, 2)
	ctx := context.Background()
	c := seedHistory(t, e)

	// A new, empty instance joins: the decision is to seed it from the replica.
	boot, _ := MariaDB.Bootstrap(testPasswords)
	e.add(dbtest.Start(t, 1, dbtest.Config{Bootstrap: boot, FirstServerID: 3})[0])
	_, p := e.decide(ctx, c)
	if p.Action.Kind != topology.ActionSeed || p.Action.Target != 2 || p.Action.From != 0 {
		t.Fatalf("decision = %+v", p.Action)
	}
	seedFromBackup(t, e, p.Action.From, p.Action.Target, func() { insertRows(t, e, c.CurrentPrimary, 61, 70) })

	p = e.converge(ctx, c)
	e.waitRows(70, 2)
	st, err := e.ins[2].Status(ctx)
	if err != nil || st.Replica == nil || st.Replica.LastSQLErrno != 0 || !st.Replica.SQLRunning {
		t.Fatalf("restored replica status %+v, %v", st.Replica, err)
	}
	if len(p.Errant) != 0 {
		t.Errorf("errant after seeding: %v", p.Errant)
	}
	// The restored instance knows the per-server history (GTIDs of server ids 1
	// and 2): it can be chosen in a failover among the replicas.
	c = e.observe(ctx, c)
	if got := c.Instances[2].Executed.String(); got != c.Instances[0].Executed.String() {
		t.Errorf("restored executed %q, replica 0 executed %q", got, c.Instances[0].Executed)
	}
	if cand, err := topology.ChooseCandidate([]topology.Instance{c.Instances[0], c.Instances[2]}, 2); err != nil || cand != 2 {
		t.Errorf("restored instance as candidate: %d, %v", cand, err)
	}
}

// seedHistory brings up two instances with 60 rows written by two successive
// primaries (0, then 1), so that the GTID history holds two server ids.
func seedHistory(t *testing.T, e *env) topology.Cluster {
	ctx := context.Background()
	c := topology.Cluster{CurrentPrimary: -1, RequestedPrimary: -1, FailoverGrace: 10 * time.Second, MaxLag: 10 * time.Second}
	c.CurrentPrimary = e.converge(ctx, c).Primary
	if err := e.ins[0].CreateDatabase(ctx, DatabaseSpec{Name: "app"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.root(0).ExecContext(ctx, "CREATE TABLE app.t (id INT PRIMARY KEY, v VARCHAR(20))"); err != nil {
		t.Fatal(err)
	}
	insertRows(t, e, 0, 1, 50)
	e.waitRows(50, 1)
	c.RequestedPrimary = 1
	_, p := e.decide(ctx, c)
	e.switchover(ctx, p)
	c.CurrentPrimary, c.RequestedPrimary = 1, -1
	e.converge(ctx, c)
	insertRows(t, e, 1, 51, 60)
	e.waitRows(60, 0)
	return c
}

// insertRows inserts rows from..to into app.t on instance i.
func insertRows(t *testing.T, e *env, i, from, to int) {
	t.Helper()
	db := e.root(i)
	for id := from; id <= to; id++ {
		if _, err := db.Exec("INSERT INTO app.t VALUES (?, 'x')", id); err != nil {
			t.Fatal(err)
		}
	}
}

// seedFromBackup replaces instance target by a copy of donor's data: backup as the
// agent, restore into a new server with server_id 3, and record the GTID state
// from the backup's binlog info through dbop. after runs once the backup is taken.
func seedFromBackup(t *testing.T, e *env, donor, target int, after func()) {
	ctx := context.Background()
	before, err := e.ins[donor].Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	e.servers[target].Kill()
	dir := dbtest.Backup(t, e.servers[donor], AgentUser, testPasswords.AgentPassword)
	after()
	raw, err := os.ReadFile(filepath.Join(dir, "xtrabackup_binlog_info"))
	if err != nil {
		t.Fatal(err)
	}
	info, err := ParseBinlogInfo(string(raw), topology.FlavorMariaDB)
	if err != nil || info.GTIDs == "" {
		t.Fatalf("binlog info %q: %+v, %v", raw, info, err)
	}
	state, pos, err := SeedState(info, before.GTIDBinlogState)
	if err != nil {
		t.Fatal(err)
	}
	restored := dbtest.StartFromDataDir(t, dir, 3, dbtest.Config{})
	_ = e.pool.Forget(e.servers[target].Addr())
	in, err := e.pool.Get(restored.Addr(), adminCred)
	if err != nil {
		t.Fatal(err)
	}
	e.servers[target], e.ins[target] = restored, in
	for _, step := range []func() error{
		func() error { return in.ResetReplica(ctx) },
		func() error { return in.SetGTIDBinlogState(ctx, state) },
		func() error { return in.SetGTIDSlavePos(ctx, pos) },
	} {
		if err := step(); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := countRows(e.root(target)); err != nil || n != 60 {
		t.Fatalf("restored rows = %d, %v; want 60", n, err)
	}
}
