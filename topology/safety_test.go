package topology_test

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/example/mysql-operator/dbop"
	"github.com/example/mysql-operator/topology"
)

// TestFailoverNeverLosesAnAcknowledgedWrite checks failover safety as a
// property, exhaustively, rather than argue it. The space explored:
//
//   - both engines, with the number of acknowledgements a commit waits for
//     taken from the code that configures the servers: Decide's
//     Plan.SemiSyncWaitCount on the healthy cluster is what the data plane
//     passes to dbop's Promote, and the dialect's SemiSyncAcks says what the
//     server does with it (MySQL: that count; MariaDB: one, shown on the
//     server by TestReplicationMariaDB);
//   - 1 to 10 instances, instance 0 the primary, the last commit T
//     acknowledged: every set of replicas holding T with at least that many
//     acknowledgers (the others may hold it too, as asynchronous receivers);
//   - every subset of reachable instances, the primary among them;
//   - T only retrieved (in the holders' relay logs) or applied;
//   - no switchover requested, or one to the last replica (spec.preferredPrimary
//     makes ChooseCandidate prefer it among equals).
//
// With the primary unreachable past the failover grace, a failover must
// promote a holder of T, as the data plane would (ChooseCandidate again on
// the candidates Decide names, their state frozen), and must happen exactly
// when no set of acknowledgers fits among the replicas left out; otherwise
// the plan says why it does not fail over. With the primary reachable,
// there is no failover.
func TestFailoverNeverLosesAnAcknowledgedWrite(t *testing.T) {
	total := 0
	for _, d := range []dbop.Dialect{dbop.MySQL, dbop.MariaDB} {
		for n := 1; n <= 10; n++ {
			t.Run(fmt.Sprintf("%s/%d", d.Engine(), n), func(t *testing.T) {
				cases := exploreFailover(t, d, n)
				total += cases
				t.Logf("%s, %d instances: %d cases", d.Engine(), n, cases)
			})
		}
	}
	t.Logf("%d cases in all", total)
	if !t.Failed() && total != wantSafetyCases {
		t.Errorf("explored %d cases, want %d: the space changed, say so in docs/dataplane.md", total, wantSafetyCases)
	}
}

// wantSafetyCases is the number of cases TestFailoverNeverLosesAnAcknowledgedWrite
// checks (docs/dataplane.md states it).
const wantSafetyCases = 2_133_718

// safetyModel is the fixed part of the cases of one engine and size.
type safetyModel struct {
	d          dbop.Dialect
	n, acks    int
	before, tx topology.GTIDSet // the history every replica has; it and T
}

// exploreFailover checks every case of one engine and size and returns
// how many it checked.
func exploreFailover(t *testing.T, d dbop.Dialect, n int) int {
	m := newSafetyModel(t, d, n)
	replicas := n - 1
	cases := 0
	for reachable := range 1 << n {
		if reachable&1 != 0 { // the primary is reachable: never a failover
			m.check(t, reachable, 1<<replicas-1, false, -1)
			cases++
			continue
		}
		for holders := range 1 << replicas {
			if popcount(holders) < m.acks {
				continue
			}
			for _, applied := range []bool{false, true} {
				for _, requested := range []int{-1, n - 1} {
					m.check(t, reachable, holders, applied, requested)
					cases++
				}
			}
		}
	}
	return cases
}

// newSafetyModel takes the acknowledgements from Decide's configuration of a
// healthy cluster and the engine's dialect.
func newSafetyModel(t *testing.T, d dbop.Dialect, n int) *safetyModel {
	t.Helper()
	m := &safetyModel{d: d, n: n}
	if d.Flavor() == topology.FlavorMariaDB {
		m.before, m.tx = gtid(t, d, "0-1-10"), gtid(t, d, "0-1-10,0-1-11")
	} else {
		m.before, m.tx = gtid(t, d, uuid(0)+":1-10"), gtid(t, d, uuid(0)+":1-11")
	}
	healthy, err := topology.Decide(m.cluster(1<<n-1, 1<<(n-1)-1, true, -1))
	if err != nil {
		t.Fatal(err)
	}
	m.acks = d.SemiSyncAcks(healthy.SemiSyncWaitCount)
	if n > 1 && healthy.SemiSyncWaitCount < 1 {
		t.Fatalf("%d instances: the primary is configured without semi-sync", n)
	}
	return m
}

// cluster is the observation of one case: bit i of reachable says instance
// i answers, bit i-1 of holders that replica i has T.
func (m *safetyModel) cluster(reachable, holders int, applied bool, requested int) topology.Cluster {
	c := topology.Cluster{Flavor: m.d.Flavor(), Replicas: m.n, CurrentPrimary: 0, RequestedPrimary: requested,
		FailoverGrace: 5 * time.Second, MaxLag: 30 * time.Second,
		// As the data plane fills it in (dataplane.clusterOf).
		SemiSyncAcks: dbop.DialectOf(m.d.Flavor()).SemiSyncAcks(topology.SemiSyncWaitCount(m.n))}
	for i := range m.n {
		in := topology.Instance{Index: i, Host: "db-" + strconv.Itoa(i), Port: 3306, PodExists: true}
		if reachable&(1<<i) == 0 {
			c.Instances = append(c.Instances, in)
			continue
		}
		in.PodReady, in.Reachable, in.SourceID = true, true, m.sourceID(i)
		if i == 0 {
			in.Writable, in.Executed, in.SemiSyncSource, in.SemiSyncWaitCount = true, m.tx, m.n > 1, topology.SemiSyncWaitCount(m.n)
			c.Instances = append(c.Instances, in)
			continue
		}
		retrieved := m.before
		if holders&(1<<(i-1)) != 0 {
			retrieved = m.tx
		}
		in.ReadOnly, in.SemiSyncReplica, in.Executed = true, true, m.before
		if applied {
			in.Executed = retrieved
		}
		lag := time.Duration(0)
		in.Replication = &topology.Replication{SourceHost: "db-0", SourcePort: 3306, IORunning: true, SQLRunning: true,
			Retrieved: retrieved, Lag: &lag}
		c.Instances = append(c.Instances, in)
	}
	if reachable&1 == 0 {
		c.PrimaryUnreachableFor = time.Minute
	}
	return c
}

// check decides one case and checks the plan.
func (m *safetyModel) check(t *testing.T, reachable, holders int, applied bool, requested int) {
	c := m.cluster(reachable, holders, applied, requested)
	p, err := topology.Decide(c)
	if err != nil {
		t.Fatalf("reachable %b: %v", reachable, err)
	}
	what := fmt.Sprintf("reachable %0*b, T on replicas %0*b (applied %t), %d acks, switchover to %d requested",
		m.n, reachable, max(m.n-1, 1), holders, applied, m.acks, requested)
	failover := p.Action.Kind == topology.ActionFailover
	if reachable&1 != 0 {
		if failover {
			t.Fatalf("%s: failover from a reachable primary: %+v", what, p.Action)
		}
		return
	}
	// Replicas left out: a set of acks acknowledgers fits among them
	// unless they are fewer than acks.
	leftOut := popcount(^reachable & (1<<m.n - 2))
	if want := m.n > 1 && leftOut < m.acks; failover != want {
		t.Fatalf("%s: failover %t, want %t (%d replicas left out): %+v", what, failover, want, leftOut, p.Action)
	}
	if !failover {
		if p.Action.Reason == "" {
			t.Fatalf("%s: no failover and no reason", what)
		}
		return
	}
	var frozen []topology.Instance
	for _, i := range p.Action.Instances {
		frozen = append(frozen, c.Instances[i])
	}
	promoted, err := topology.ChooseCandidate(frozen, c.RequestedPrimary)
	if err != nil || promoted != p.Action.Target {
		t.Fatalf("%s: the data plane would promote %d (%v), Decide planned %d", what, promoted, err, p.Action.Target)
	}
	if holders&(1<<(promoted-1)) == 0 {
		t.Fatalf("%s: promoted instance %d lacks the acknowledged transaction", what, promoted)
	}
}

// sourceID is the GTID source of instance i.
func (m *safetyModel) sourceID(i int) string {
	if m.d.Flavor() == topology.FlavorMariaDB {
		return strconv.Itoa(i + 1)
	}
	return uuid(i)
}

// uuid is the server_uuid of instance i of a MySQL cluster.
func uuid(i int) string { return fmt.Sprintf("c0ffee00-0000-4000-8000-%012d", i+1) }

func gtid(t *testing.T, d dbop.Dialect, s string) topology.GTIDSet {
	t.Helper()
	g, err := topology.ParseGTIDSet(d.Flavor(), s)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func popcount(x int) int {
	n := 0
	for ; x != 0; x &= x - 1 {
		n++
	}
	return n
}
