package dbop

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/example/mysql-operator/topology"
)

// TestReplicationMariaDB runs a three-instance MariaDB cluster through dbop and
// topology: bootstrap, semi-sync replication, read-only replicas, switchover, a
// crash of the primary with an unacknowledged transaction, failover, the old
// primary's return as errant, and an errant write on a replica.
func TestReplicationMariaDB(t *testing.T) {
	r := &replCase{e: startEnv(t, 3), ctx: context.Background(), c: topology.Cluster{CurrentPrimary: -1,
		RequestedPrimary: -1, FailoverGrace: 10 * time.Second, MaxLag: 10 * time.Second}}
	t.Run("bootstrap and replicas", r.bootstrapAndReplicas)
	t.Run("data reaches both replicas with semi-sync", r.dataReachesBothReplicasWithSemiSync)
	t.Run("a commit waits for the dialect's acknowledgements", r.commitWaitsForTheDialectsAcks)
	t.Run("replicas refuse writes", r.replicasRefuseWrites)
	t.Run("switchover", r.switchover)
	t.Run("unacknowledged commit blocks, crash, failover", r.unacknowledgedCommitBlocksCrashFailover)
	t.Run("errant write on a replica", r.errantWriteOnAReplica)
}

// replCase is the state the subtests of TestReplicationMariaDB share, in order.
type replCase struct {
	e   *env
	ctx context.Context
	c   topology.Cluster // spec and status as the reconciler would hold them
}

// bootstrapAndReplicas is the subtest "bootstrap and replicas".
func (r *replCase) bootstrapAndReplicas(t *testing.T) {
	e, ctx, c := r.e, r.ctx, &r.c
	c2, p := e.decide(ctx, *c)
	if p.Action.Kind != topology.ActionBootstrap || p.Action.Target != 0 {
		t.Fatalf("first decision = %+v", p.Action)
	}
	e.act(ctx, c2, p)
	c.CurrentPrimary = 0
	p = e.converge(ctx, *c)
	if p.Primary != 0 || len(p.Errant) != 0 {
		t.Fatalf("plan = %+v", p)
	}
}

// dataReachesBothReplicasWithSemiSync is the subtest "data reaches both replicas with semi-sync".
func (r *replCase) dataReachesBothReplicasWithSemiSync(t *testing.T) {
	e, ctx := r.e, r.ctx
	if err := e.ins[0].CreateDatabase(ctx, DatabaseSpec{Name: "app"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.root(0).ExecContext(ctx, "CREATE TABLE app.t (id INT PRIMARY KEY, v VARCHAR(20))"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.root(0).ExecContext(ctx, "INSERT INTO app.t VALUES (1, 'one')"); err != nil {
		t.Fatal(err)
	}
	e.waitRows(1, 1, 2)
	var v string
	if err := e.root(2).QueryRow("SELECT v FROM app.t WHERE id = 1").Scan(&v); err != nil || v != "one" {
		t.Errorf("replica 2 row = %q, %v", v, err)
	}
	st, err := e.ins[0].Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s := st.SemiSync
	if !s.SourceEnabled || !s.SourceActive || s.Clients != 2 || s.YesTx < 3 || s.NoTx != 0 || s.TimeoutMillis < 30*24*3600*1000 {
		t.Errorf("primary semi-sync = %+v", s)
	}
	for _, i := range []int{1, 2} {
		st, err := e.ins[i].Status(ctx)
		if err != nil || !st.SemiSync.ReplicaEnabled || !st.SemiSync.ReplicaActive || st.SemiSync.SourceEnabled {
			t.Errorf("replica %d semi-sync = %+v, %v", i, st.SemiSync, err)
		}
	}
}

// replicasRefuseWrites is the subtest "replicas refuse writes".
func (r *replCase) replicasRefuseWrites(t *testing.T) {
	e, ctx := r.e, r.ctx
	if err := e.ins[0].CreateUser(ctx, UserSpec{Name: "app", Host: "%", Password: "app-pw"}); err != nil {
		t.Fatal(err)
	}
	g := Grant{Database: "app", Table: "*", Privileges: []string{"SELECT", "INSERT"}}
	if err := e.ins[0].GrantPrivileges(ctx, "app", "%", g); err != nil {
		t.Fatal(err)
	}
	e.waitRows(1, 1)
	app := rawDB(t, e.servers[1].Addr(), "app", "app-pw")
	eventually(t, 10*time.Second, "app user replicated", func() error { return app.PingContext(ctx) })
	if _, err := app.ExecContext(ctx, "INSERT INTO app.t VALUES (100, 'no')"); mysqlErrno(err) != 1290 {
		t.Errorf("app write on a replica: want read-only error 1290, got %v", err)
	}
	if _, err := e.root(2).ExecContext(ctx, "INSERT INTO app.t VALUES (101, 'no')"); mysqlErrno(err) != 1290 {
		t.Errorf("root write on a replica: want read-only error 1290, got %v", err)
	}
	if _, err := rawDB(t, e.servers[0].Addr(), "app", "app-pw").ExecContext(ctx, "INSERT INTO app.t VALUES (2, 'two')"); err != nil {
		t.Errorf("app write on the primary: %v", err)
	}
	e.waitRows(2, 1, 2)
}

// switchover is the subtest "switchover".
func (r *replCase) switchover(t *testing.T) {
	e, ctx, c := r.e, r.ctx, &r.c
	c.RequestedPrimary = 1
	_, p := e.decide(ctx, *c)
	if p.Action.Kind != topology.ActionSwitchover || p.Action.Target != 1 || !slices.Equal(p.Action.Instances, []int{0, 2}) {
		t.Fatalf("decision = %+v", p.Action)
	}
	e.switchover(ctx, p)
	c.CurrentPrimary, c.RequestedPrimary = 1, -1
	p = e.converge(ctx, *c)
	if p.Primary != 1 {
		t.Fatalf("primary %d after switchover", p.Primary)
	}
	if _, err := e.root(1).ExecContext(ctx, "INSERT INTO app.t VALUES (3, 'three')"); err != nil {
		t.Fatal(err)
	}
	e.waitRows(3, 0, 1, 2)
	if _, err := e.root(0).ExecContext(ctx, "INSERT INTO app.t VALUES (102, 'no')"); mysqlErrno(err) != 1290 {
		t.Errorf("write on the old primary: want 1290, got %v", err)
	}
}

// unacknowledgedCommitBlocksCrashFailover is the subtest "unacknowledged commit blocks, crash, failover".
func (r *replCase) unacknowledgedCommitBlocksCrashFailover(t *testing.T) {
	e, ctx, c := r.e, r.ctx, &r.c
	lost := e.blockCommit(ctx, 1, []int{0, 2})
	e.servers[1].Kill()
	c.PrimaryUnreachableFor = time.Minute
	_, p := e.decide(ctx, *c)
	if p.Action.Kind != topology.ActionFailover || !slices.Equal(p.Action.Instances, []int{0, 2}) {
		t.Fatalf("decision = %+v", p.Action)
	}
	newPrimary := e.failover(ctx, *c, p)
	c.CurrentPrimary, c.PrimaryUnreachableFor = newPrimary, 0
	e.waitRows(3, newPrimary)
	if _, err := e.root(newPrimary).ExecContext(ctx, "INSERT INTO app.t VALUES (4, 'four')"); err != nil {
		t.Fatal(err)
	}
	other := 2 - newPrimary // the other survivor (0 or 2)
	e.waitRows(4, other)

	if err := e.servers[1].Start(); err != nil {
		t.Fatal(err)
	}
	st, err := e.ins[1].Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !contains(st.GTIDBinlogState, lost) {
		t.Fatalf("old primary recovered without its unacknowledged transaction %s: %s", lost, st.GTIDBinlogState)
	}
	c2, p := e.decide(ctx, *c)
	if !slices.Equal(p.Errant, []int{1}) || p.Instances[1].Role != topology.RoleErrant {
		t.Fatalf("old primary with a lost transaction not errant: errant %v, states %+v", p.Errant, p.Instances)
	}
	if p.Action.Kind != topology.ActionNone {
		t.Errorf("action on a cluster with an errant old primary: %+v", p.Action)
	}
	if c2.Instances[1].Replication != nil {
		t.Errorf("errant old primary was configured as a replica")
	}
}

// errantWriteOnAReplica is the subtest "errant write on a replica".
func (r *replCase) errantWriteOnAReplica(t *testing.T) {
	e, ctx, c := r.e, r.ctx, &r.c
	replica := 2 - c.CurrentPrimary // the survivor that replicates
	admin := rawDB(t, e.servers[replica].Addr(), AdminUser, testPasswords.AdminPassword)
	// The admin keeps READ_ONLY ADMIN: its write on a replica is binlogged
	// under the replica's server_id, an errant transaction.
	if _, err := admin.ExecContext(ctx, "INSERT INTO app.t VALUES (200, 'errant')"); err != nil {
		t.Fatal(err)
	}
	_, p := e.decide(ctx, *c)
	if !slices.Equal(p.Errant, []int{min(1, replica), max(1, replica)}) || p.Instances[replica].Role != topology.RoleErrant {
		t.Errorf("errant write on replica %d not detected: %v %+v", replica, p.Errant, p.Instances)
	}
	if p.Action.Kind != topology.ActionNone {
		t.Errorf("decision with errant replicas: %+v", p.Action)
	}
}

// contains reports whether the MariaDB GTID list has the GTID.
func contains(list, gtid string) bool {
	set, err := topology.ParseMariaDBGTIDSet(list)
	one, err2 := topology.ParseMariaDBGTIDSet(gtid)
	return err == nil && err2 == nil && set.Contains(one)
}

// switchover performs a planned switchover the way the reconciler will.
func (e *env) switchover(ctx context.Context, p topology.Plan) {
	e.t.Helper()
	from, to := p.Action.From, p.Action.Target
	if err := e.ins[from].SetReadOnly(ctx); err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.ins[from].KillConnections(ctx); err != nil {
		e.t.Fatal(err)
	}
	st, err := e.ins[from].Status(ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	exec, err := st.Executed()
	if err != nil {
		e.t.Fatal(err)
	}
	if err := e.ins[to].WaitForGTID(ctx, exec.WaitTarget(), 10*time.Second); err != nil {
		e.t.Fatal(err)
	}
	if err := e.ins[to].Promote(ctx, p.SemiSyncWaitCount); err != nil {
		e.t.Fatal(err)
	}
	for _, i := range p.Action.Instances {
		if err := e.ins[i].ConfigureReplica(ctx, e.source(to), true); err != nil {
			e.t.Fatal(err)
		}
	}
}

// blockCommit stops the I/O threads of the replicas of primary and starts an
// INSERT on it, which semi-sync must block; it returns the blocked transaction's
// GTID once it is in the primary's binary log.
func (e *env) blockCommit(ctx context.Context, primary int, replicas []int) string {
	e.t.Helper()
	for _, i := range replicas {
		if err := e.ins[i].StopIOThread(ctx); err != nil {
			e.t.Fatal(err)
		}
	}
	before, err := e.ins[primary].Status(ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := e.root(primary).ExecContext(ctx, "INSERT INTO app.t VALUES (999, 'unacknowledged')")
		done <- err
	}()
	var lost string
	eventually(e.t, 10*time.Second, "blocked commit in the binary log", func() error {
		st, err := e.ins[primary].Status(ctx)
		if err != nil {
			return err
		}
		if st.GTIDBinlogState == before.GTIDBinlogState {
			return fmt.Errorf("binlog state still %s", st.GTIDBinlogState)
		}
		if st.SemiSync.NoTx != 0 || !st.SemiSync.SourceActive {
			e.t.Fatalf("semi-sync fell back to asynchronous: %+v", st.SemiSync)
		}
		lost = st.GTIDCurrentPos
		return nil
	})
	// Asserting that something does not happen needs a window: the commit must
	// still be waiting a second later (MariaDB's default timeout would be 10s; the configured
	// one is checked above to be over 30 days).
	select {
	case err := <-done:
		e.t.Fatalf("INSERT returned without an acknowledgement: %v", err)
	case <-time.After(time.Second):
	}
	if st, err := e.ins[primary].Status(ctx); err != nil || st.SemiSync.NoTx != 0 || !st.SemiSync.SourceActive {
		e.t.Fatalf("semi-sync fell back to asynchronous: %+v, %v", st, err)
	}
	return lost
}

// failover performs a failover the way the reconciler will: fence, re-observe,
// choose, apply the relay log, promote, repoint. It returns the new primary.
func (e *env) failover(ctx context.Context, c topology.Cluster, p topology.Plan) int {
	e.t.Helper()
	for _, i := range p.Action.Instances {
		if err := e.ins[i].StopIOThread(ctx); err != nil {
			e.t.Fatal(err)
		}
	}
	c = e.observe(ctx, c)
	var cands []topology.Instance
	for _, i := range p.Action.Instances {
		cands = append(cands, c.Instances[i])
	}
	cand, err := topology.ChooseCandidate(cands, c.RequestedPrimary)
	if err != nil {
		e.t.Fatal(err)
	}
	in := c.Instances[cand]
	if err := e.ins[cand].WaitForGTID(ctx, in.Replication.Retrieved.WaitTarget(), 10*time.Second); err != nil {
		e.t.Fatal(err)
	}
	if err := e.ins[cand].Promote(ctx, c.Replicas/2); err != nil {
		e.t.Fatal(err)
	}
	for _, i := range p.Action.Instances {
		if i != cand {
			if err := e.ins[i].ConfigureReplica(ctx, e.source(cand), true); err != nil {
				e.t.Fatal(err)
			}
		}
	}
	return cand
}
