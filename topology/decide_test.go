package topology

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// base returns a healthy MariaDB cluster of n instances: 0 is the writable
// semi-sync primary at 0-1-10, the others replicate from it and are caught up.
func base(n int) Cluster {
	c := Cluster{Flavor: FlavorMariaDB, Replicas: n, CurrentPrimary: 0, RequestedPrimary: -1,
		FailoverGrace: 30 * time.Second, MaxLag: 10 * time.Second, SemiSyncAcks: min(n-1, 1)}
	for i := range n {
		in := Instance{Index: i, Host: "db-" + strconv.Itoa(i), Port: 3306, PodExists: true, PodReady: true,
			Reachable: true, SourceID: strconv.Itoa(i + 1), ReadOnly: true,
			Executed: MustParseGTIDSet(FlavorMariaDB, "0-1-10"), SemiSyncReplica: n > 1}
		if i == 0 {
			in.ReadOnly, in.SemiSyncReplica, in.SemiSyncSource, in.SemiSyncWaitCount = false, false, n > 1, n/2
		} else {
			in.Replication = replicating("db-0", "0-1-10")
		}
		c.Instances = append(c.Instances, in)
	}
	return c
}

func replicating(host, retrieved string) *Replication {
	lag := time.Duration(0)
	return &Replication{SourceHost: host, SourcePort: 3306, IORunning: true, SQLRunning: true,
		Retrieved: MustParseGTIDSet(FlavorMariaDB, retrieved), Lag: &lag}
}

func gtids(s string) GTIDSet { return MustParseGTIDSet(FlavorMariaDB, s) }

// lose makes the current primary unreachable for d.
func lose(c *Cluster, d time.Duration) {
	c.Instances[c.CurrentPrimary] = Instance{Index: c.CurrentPrimary, Host: c.Instances[c.CurrentPrimary].Host, Port: 3306, PodExists: true}
	c.PrimaryUnreachableFor = d
}

type want struct {
	kind      ActionKind
	target    int
	from      int
	instances []int
	primary   int
	errant    []int
	roles     string // roles by index, e.g. "PRR" (P primary, R replica, E errant, 0 empty, ? unknown)
	ready     string // readiness by index, e.g. "yyn"
	reason    string // substring of the action's reason
}

func TestDecide(t *testing.T) { runDecide(t, withPrimaryCases) }

// withPrimaryCases are the decisions with the primary reachable.
var withPrimaryCases = []decideCase{
	{"healthy", 3, nil, want{kind: ActionNone, target: -1, from: -1, primary: 0, roles: "PRR", ready: "yyy"}},
	{"new cluster bootstraps instance 0", 3, func(c *Cluster) {
		c.CurrentPrimary = -1
		for i := range c.Instances {
			c.Instances[i].Executed, c.Instances[i].Replication, c.Instances[i].ReadOnly = GTIDSet{}, nil, true
		}
		c.Instances[2] = Instance{Index: 2}
	}, want{kind: ActionBootstrap, target: 0, from: -1, primary: 0}},
	{"new cluster waits for instance 0", 3, func(c *Cluster) {
		c.CurrentPrimary = -1
		for i := range c.Instances {
			c.Instances[i].Executed = GTIDSet{}
		}
		c.Instances[0].Reachable = false
	}, want{kind: ActionNone, target: -1, from: -1, primary: -1, reason: "waiting for instance 0"}},
	{"new cluster with data adopts the most advanced", 3, func(c *Cluster) {
		c.CurrentPrimary = -1
		c.Instances[1].Executed = gtids("0-1-12")
	}, want{kind: ActionConfigurePrimary, target: 1, from: -1, primary: 1, reason: "adopting instance 1"}},
	{"new cluster with data waits for every instance", 3, func(c *Cluster) {
		c.CurrentPrimary = -1
		c.Instances[2].Reachable = false
	}, want{kind: ActionNone, target: -1, from: -1, primary: -1, reason: "waiting for every instance"}},
	{"writable replica is made read-only first", 3, func(c *Cluster) {
		c.Instances[2].ReadOnly = false
		c.Instances[0].ReadOnly = true
	}, want{kind: ActionSetReadOnly, target: -1, from: -1, instances: []int{2}, primary: 0}},
	{"read-only primary", 3, func(c *Cluster) { c.Instances[0].ReadOnly = true },
		want{kind: ActionConfigurePrimary, target: 0, from: -1, primary: 0, ready: "nyy"}},
	{"primary without semi-sync", 3, func(c *Cluster) { c.Instances[0].SemiSyncSource = false },
		want{kind: ActionConfigurePrimary, target: 0, from: -1, primary: 0}},
	{"primary still replicating", 3, func(c *Cluster) { c.Instances[0].Replication = replicating("db-1", "") },
		want{kind: ActionConfigurePrimary, target: 0, from: -1, primary: 0}},
	{"MariaDB ignores the wait count", 5, func(c *Cluster) { c.Instances[0].SemiSyncWaitCount = 1 },
		want{kind: ActionNone, target: -1, from: -1, primary: 0}},
	{"single instance without semi-sync is fine", 1, nil,
		want{kind: ActionNone, target: -1, from: -1, primary: 0, roles: "P", ready: "y"}},
	{"single instance with semi-sync on", 1, func(c *Cluster) { c.Instances[0].SemiSyncSource = true },
		want{kind: ActionConfigurePrimary, target: 0, from: -1, primary: 0}},
	{"unconfigured replica", 3, func(c *Cluster) { c.Instances[1].Replication = nil },
		want{kind: ActionConfigureReplicas, target: 0, from: -1, instances: []int{1}, primary: 0, ready: "yny"}},
	{"replica of another source", 3, func(c *Cluster) { c.Instances[2].Replication.SourceHost = "db-1" },
		want{kind: ActionConfigureReplicas, target: 0, from: -1, instances: []int{2}, primary: 0}},
	{"fenced replica (IO thread stopped)", 3, func(c *Cluster) { c.Instances[1].Replication.IORunning = false },
		want{kind: ActionConfigureReplicas, target: 0, from: -1, instances: []int{1}, primary: 0}},
	{"TLS turned on: replicas in clear are configured again", 3, func(c *Cluster) {
		c.ReplicationTLS = true
		c.Instances[2].Replication.TLS = true
	}, want{kind: ActionConfigureReplicas, target: 0, from: -1, instances: []int{1}, primary: 0}},
	{"TLS turned off: replicas over TLS are configured again", 3, func(c *Cluster) { c.Instances[1].Replication.TLS = true },
		want{kind: ActionConfigureReplicas, target: 0, from: -1, instances: []int{1}, primary: 0}},
	{"restarted primary behind a replica fails over to it", 3, func(c *Cluster) {
		c.Instances[0].ReadOnly, c.Instances[0].SemiSyncSource = true, false
		c.Instances[1].Replication.Retrieved = gtids("0-1-11")
	}, want{kind: ActionFailover, target: 1, from: 0, instances: []int{1, 2}, primary: 1, reason: "restarted without transactions a replica received"}},
	{"restarted primary with every transaction is made writable", 3, func(c *Cluster) {
		c.Instances[0].ReadOnly, c.Instances[0].SemiSyncSource = true, false
	}, want{kind: ActionConfigurePrimary, target: 0, from: -1, primary: 0}},
	{"switchover to a replica catching up waits", 3, func(c *Cluster) {
		c.RequestedPrimary = 1
		lag := 5 * time.Second
		c.Instances[1].Replication.Lag = &lag
	}, want{kind: ActionNone, target: -1, from: -1, primary: 0, reason: "instance 1 is catching up (lag 5s)"}},
	{"commits stuck on a lost acknowledgement get a heartbeat", 3, func(c *Cluster) {
		c.Instances[0].SemiSyncWaitSessions, c.CommitsStuckFor = 1, 3*time.Second
	}, want{kind: ActionHeartbeat, target: 0, from: -1, primary: 0, reason: "2 replicas hold already"}},
	{"commits waiting a moment are left alone", 3, func(c *Cluster) {
		c.Instances[0].SemiSyncWaitSessions, c.CommitsStuckFor = 1, time.Second
	}, want{kind: ActionNone, target: -1, from: -1, primary: 0}},
	{"commits waiting on replicas that lack a transaction get no heartbeat", 3, func(c *Cluster) {
		c.Instances[0].SemiSyncWaitSessions, c.CommitsStuckFor = 1, time.Minute
		c.Instances[0].Executed = gtids("0-1-11")
	}, want{kind: ActionNone, target: -1, from: -1, primary: 0}},
	{"receiver fenced while reconnecting is configured again", 3, func(c *Cluster) {
		r := c.Instances[1].Replication
		r.IORunning, r.LastIOError, r.IOErrorTransient = false, "error reconnecting to master: Can't connect", true
	}, want{kind: ActionConfigureReplicas, target: 0, from: -1, instances: []int{1}, primary: 0}},
	{"receiver stopped on a purged binary log is reported", 3, func(c *Cluster) {
		r := c.Instances[1].Replication
		r.IORunning, r.LastIOError = false, "Got fatal error 1236 from master"
	}, want{kind: ActionNone, target: -1, from: -1, primary: 0, ready: "yny"}},
	{"replica without semi-sync ack", 3, func(c *Cluster) { c.Instances[2].SemiSyncReplica = false },
		want{kind: ActionConfigureReplicas, target: 0, from: -1, instances: []int{2}, primary: 0}},
	{"SQL error is reported, not retried", 3, func(c *Cluster) {
		r := c.Instances[1].Replication
		r.SQLRunning, r.LastSQLError = false, "Duplicate entry '1' for key 'PRIMARY'"
	}, want{kind: ActionNone, target: -1, from: -1, primary: 0, roles: "PRR", ready: "yny"}},
	{"IO thread connecting", 3, func(c *Cluster) {
		c.Instances[2].Replication.IORunning, c.Instances[2].Replication.IOConnecting = false, true
	}, want{kind: ActionNone, target: -1, from: -1, primary: 0, ready: "yyn"}},
	{"lagging replica is not ready", 3, func(c *Cluster) {
		lag := 11 * time.Second
		c.Instances[1].Replication.Lag = &lag
	}, want{kind: ActionNone, target: -1, from: -1, primary: 0, ready: "yny"}},
	{"unknown lag is not ready", 3, func(c *Cluster) { c.Instances[1].Replication.Lag = nil },
		want{kind: ActionNone, target: -1, from: -1, primary: 0, ready: "yny"}},
	{"pod not ready", 3, func(c *Cluster) { c.Instances[2].PodReady = false },
		want{kind: ActionNone, target: -1, from: -1, primary: 0, ready: "yyn"}},
	{"errant replica is reported and left alone", 3, func(c *Cluster) {
		c.Instances[1].Executed = gtids("0-1-10,0-2-11")
		c.Instances[1].Replication = nil
	}, want{kind: ActionNone, target: -1, from: -1, primary: 0, errant: []int{1}, roles: "PER", ready: "yny"}},
	{"replica ahead on the primary's own GTIDs is not errant", 3, func(c *Cluster) {
		c.Instances[2].Executed = gtids("0-1-12")
	}, want{kind: ActionNone, target: -1, from: -1, primary: 0, roles: "PRR"}},
	{"unreachable known errant stays errant", 3, func(c *Cluster) {
		c.KnownErrant = []int{2}
		c.Instances[2].Reachable = false
	}, want{kind: ActionNone, target: -1, from: -1, primary: 0, errant: []int{2}, roles: "PRE"}},
	{"empty instance is seeded from a ready replica", 3, func(c *Cluster) {
		c.Instances[2].Executed, c.Instances[2].Replication = GTIDSet{}, nil
	}, want{kind: ActionSeed, target: 2, from: 1, primary: 0, roles: "PR0"}},
	{"empty instance is seeded from the primary without a ready replica", 2, func(c *Cluster) {
		c.Instances[1].Executed, c.Instances[1].Replication = GTIDSet{}, nil
	}, want{kind: ActionSeed, target: 1, from: 0, primary: 0}},
	{"switchover to a ready replica", 3, func(c *Cluster) { c.RequestedPrimary = 1 },
		want{kind: ActionSwitchover, target: 1, from: 0, instances: []int{0, 2}, primary: 1}},
	{"switchover resumes on a read-only primary", 3, func(c *Cluster) {
		c.RequestedPrimary, c.Instances[0].ReadOnly = 2, true
	}, want{kind: ActionSwitchover, target: 2, from: 0, instances: []int{0, 1}, primary: 2}},
	{"switchover to a lagging replica waits", 3, func(c *Cluster) {
		c.RequestedPrimary = 1
		lag := time.Minute
		c.Instances[1].Replication.Lag = &lag
	}, want{kind: ActionNone, target: -1, from: -1, primary: 0, reason: "switchover to instance 1 waits"}},
	{"switchover to an errant replica waits", 3, func(c *Cluster) {
		c.RequestedPrimary = 2
		c.Instances[2].Executed = gtids("0-1-10,0-3-11")
	}, want{kind: ActionNone, target: -1, from: -1, primary: 0, errant: []int{2}, reason: "instance 2 is Errant"}},
	{"switchover does not skip replica configuration", 3, func(c *Cluster) {
		c.RequestedPrimary = 1
		c.Instances[1].Replication = nil
	}, want{kind: ActionConfigureReplicas, target: 0, from: -1, instances: []int{1}, primary: 0}},
}

func TestDecideLostPrimary(t *testing.T) { runDecide(t, lostPrimaryCases) }

// lostPrimaryCases are the decisions with the primary lost or back without data.
var lostPrimaryCases = []decideCase{
	{"within the grace period the replicas are fenced", 3, func(c *Cluster) { lose(c, 10*time.Second) },
		want{kind: ActionFence, target: -1, from: 0, instances: []int{1, 2}, primary: 0, reason: "failover once it has been for 30s"}},
	{"within the grace period, fenced, the operator waits", 3, func(c *Cluster) {
		lose(c, 10*time.Second)
		c.Instances[1].Replication.IORunning = false
		c.Instances[2].Replication.IORunning = false
	}, want{kind: ActionNone, target: -1, from: -1, primary: 0, reason: "failover once it has been for 30s"}},
	{"failover to the replica that retrieved most", 3, func(c *Cluster) {
		lose(c, time.Minute)
		c.Instances[1].Replication.Retrieved = gtids("0-1-11")
		c.Instances[2].Replication.Retrieved = gtids("0-1-12")
	}, want{kind: ActionFailover, target: 2, from: 0, instances: []int{1, 2}, primary: 2, roles: "PRR", ready: "nnn"}},
	{"failover prefers the requested primary among equals", 3, func(c *Cluster) {
		lose(c, time.Minute)
		c.RequestedPrimary = 2
	}, want{kind: ActionFailover, target: 2, from: 0, instances: []int{1, 2}, primary: 2}},
	{"failover takes the lowest index among equals", 3, func(c *Cluster) { lose(c, time.Minute) },
		want{kind: ActionFailover, target: 1, from: 0, instances: []int{1, 2}, primary: 1}},
	{"no failover without a quorum", 3, func(c *Cluster) {
		lose(c, time.Minute)
		c.Instances[2].Reachable = false
	}, want{kind: ActionNone, target: -1, from: -1, primary: 0, reason: "each commit waited for 1 of the 2 replicas, so 2 of them must be reachable"}},
	{"two instances fail over with their one replica", 2, func(c *Cluster) { lose(c, time.Minute) },
		want{kind: ActionFailover, target: 1, from: 0, instances: []int{1}, primary: 1}},
	{"a single instance never fails over", 1, func(c *Cluster) { lose(c, time.Hour) },
		want{kind: ActionNone, target: -1, from: -1, primary: 0}},
	{"MariaDB: a known errant replica may hold the only acknowledgement", 5, func(c *Cluster) {
		lose(c, time.Minute)
		c.KnownErrant = []int{1}
		c.Instances[1].Executed = gtids("0-1-10,0-2-50")
		c.Instances[3].Replication.Retrieved = gtids("0-1-13")
	}, want{kind: ActionNone, target: -1, from: -1, primary: 0, errant: []int{1}, roles: "PERRR",
		reason: "each commit waited for 1 of the 4 replicas, so 4 of them must be reachable, hold data and not be errant"}},
	{"MariaDB: a replica lost with the primary blocks failover", 4, func(c *Cluster) {
		lose(c, time.Minute)
		c.Instances[3].Reachable = false
	}, want{kind: ActionNone, target: -1, from: -1, primary: 0, reason: "so 3 of them must be reachable"}},
	{"errant replicas do not count for the quorum", 3, func(c *Cluster) {
		lose(c, time.Minute)
		c.KnownErrant = []int{1}
	}, want{kind: ActionNone, target: -1, from: -1, primary: 0, errant: []int{1}}},
	{"diverged replicas block failover", 3, func(c *Cluster) {
		lose(c, time.Minute)
		c.Instances[1].Executed = gtids("0-1-10,0-2-11")
		c.Instances[2].Replication.Retrieved = gtids("0-1-12")
	}, want{kind: ActionNone, target: -1, from: -1, primary: 0, reason: ErrNoCandidate.Error()}},
	{"empty instances do not vote", 3, func(c *Cluster) {
		lose(c, time.Minute)
		c.Instances[2].Executed, c.Instances[2].Replication = GTIDSet{}, nil
	}, want{kind: ActionNone, target: -1, from: -1, primary: 0}},
	{"primary back without data fails over at once", 3, func(c *Cluster) {
		c.Instances[0].Executed = GTIDSet{}
	}, want{kind: ActionFailover, target: 1, from: 0, instances: []int{1, 2}, primary: 1, roles: "0RR"}},
	{"old primary returning writable is made read-only", 3, func(c *Cluster) {
		oldPrimaryBack(c, "0-1-11")
	}, want{kind: ActionSetReadOnly, target: -1, from: -1, instances: []int{0}, primary: 1}},
	{"old primary with unacknowledged transactions has them discarded", 3, func(c *Cluster) {
		oldPrimaryBack(c, "0-1-12")
		c.Instances[0].ReadOnly = true
	}, want{kind: ActionDiscardUnacknowledged, target: 0, from: -1, primary: 1, errant: []int{0}, roles: "EPR", reason: "0-1-12"}},
	{"old primary back with a commit waiting for its acknowledgement is crashed, not made read-only", 3, func(c *Cluster) {
		oldPrimaryBack(c, "0-1-11")
		c.Instances[0].SemiSyncWaitSessions = 1
	}, want{kind: ActionDiscardUnacknowledged, target: 0, from: -1, primary: 1, reason: "has 1 commits waiting"}},
	{"old primary back writable with unacknowledged transactions is crashed first", 3, func(c *Cluster) {
		oldPrimaryBack(c, "0-1-12")
	}, want{kind: ActionDiscardUnacknowledged, target: 0, from: -1, primary: 1, errant: []int{0}}},
	{"old primary still errant once discarded is reported", 3, func(c *Cluster) {
		oldPrimaryBack(c, "0-1-12")
		c.Instances[0].ReadOnly, c.Discarded = true, []int{0}
	}, want{kind: ActionNone, target: -1, from: -1, primary: 1, errant: []int{0}, roles: "EPR"}},
	{"errant with another server's transactions is not crashed", 3, func(c *Cluster) {
		oldPrimaryBack(c, "0-1-11,0-2-20,0-7-3")
		c.Instances[0].ReadOnly = true
	}, want{kind: ActionNone, target: -1, from: -1, primary: 1, errant: []int{0}, roles: "EPR"}},
	{"old primary without lost transactions rejoins", 3, func(c *Cluster) {
		oldPrimaryBack(c, "0-1-11")
		c.Instances[0].ReadOnly = true
	}, want{kind: ActionConfigureReplicas, target: 1, from: -1, instances: []int{0}, primary: 1, roles: "RPR"}},
}

// oldPrimaryBack sets up the cluster after a failover from 0 to 1: instance 1 got
// 0-1-11 from the old primary, then wrote 0-2-12..20; instance 0 comes back with
// the given executed set and writable.
func oldPrimaryBack(c *Cluster, executed string) {
	c.CurrentPrimary = 1
	for i := range c.Instances {
		c.Instances[i].Executed = gtids("0-1-11,0-2-20")
		c.Instances[i].Replication = replicating("db-1", "0-2-20")
		c.Instances[i].ReadOnly, c.Instances[i].SemiSyncSource = true, false
	}
	p := &c.Instances[1]
	p.Replication, p.ReadOnly, p.SemiSyncSource, p.SemiSyncWaitCount, p.SemiSyncReplica = nil, false, true, 1, false
	o := &c.Instances[0]
	o.Executed, o.Replication, o.ReadOnly, o.SemiSyncReplica, o.SemiSyncSource = gtids(executed), nil, false, false, true
}

// decideCase is one table test of Decide: base(n), modified by mod, must give want.
type decideCase struct {
	name string
	n    int
	mod  func(c *Cluster)
	want want
}

func runDecide(t *testing.T, cases []decideCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := base(tc.n)
			if tc.mod != nil {
				tc.mod(&c)
			}
			writableUnlessReadOnly(&c)
			p, err := Decide(c)
			if err != nil {
				t.Fatalf("Decide: %v", err)
			}
			checkPlan(t, p, tc.want)
		})
	}
}

// writableUnlessReadOnly sets Writable = !ReadOnly, as on MariaDB and on MySQL when
// read_only and super_read_only agree.
func writableUnlessReadOnly(c *Cluster) {
	for i := range c.Instances {
		c.Instances[i].Writable = c.Instances[i].Reachable && !c.Instances[i].ReadOnly
	}
}

func checkPlan(t *testing.T, p Plan, w want) {
	t.Helper()
	a := p.Action
	if a.Kind != w.kind || a.Target != w.target || a.From != w.from || !slices.Equal(a.Instances, w.instances) {
		t.Errorf("action = %+v, want kind=%s target=%d from=%d instances=%v", a, w.kind, w.target, w.from, w.instances)
	}
	if p.Primary != w.primary {
		t.Errorf("primary = %d, want %d", p.Primary, w.primary)
	}
	if !slices.Equal(p.Errant, w.errant) {
		t.Errorf("errant = %v, want %v", p.Errant, w.errant)
	}
	if !strings.Contains(a.Reason, w.reason) {
		t.Errorf("reason = %q, want it to contain %q", a.Reason, w.reason)
	}
	if w.roles != "" && rolesOf(p) != w.roles {
		t.Errorf("roles = %s, want %s (%+v)", rolesOf(p), w.roles, p.Instances)
	}
	if w.ready != "" && readyOf(p) != w.ready {
		t.Errorf("ready = %s, want %s (%+v)", readyOf(p), w.ready, p.Instances)
	}
}

func rolesOf(p Plan) string {
	abbr := map[Role]byte{RolePrimary: 'P', RoleReplica: 'R', RoleErrant: 'E', RoleEmpty: '0', RoleUnknown: '?'}
	var b strings.Builder
	for _, st := range p.Instances {
		b.WriteByte(abbr[st.Role])
	}
	return b.String()
}

func readyOf(p Plan) string {
	var b strings.Builder
	for _, st := range p.Instances {
		if st.Ready {
			b.WriteByte('y')
		} else {
			b.WriteByte('n')
		}
	}
	return b.String()
}
