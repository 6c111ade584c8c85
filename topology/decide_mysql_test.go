package topology

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// mysqlCluster converts base(n) to MySQL: instance i has server_uuid uuids[i].
func mysqlCluster(n int) (Cluster, []string) {
	uuids := []string{uA, uB, "c0ffee00-0000-4000-8000-000000000003", "c0ffee00-0000-4000-8000-000000000004",
		"c0ffee00-0000-4000-8000-000000000005"}
	c := base(n)
	c.Flavor, c.SemiSyncAcks = FlavorMySQL, SemiSyncWaitCount(n)
	for i := range c.Instances {
		in := &c.Instances[i]
		in.SourceID = uuids[i]
		in.Executed = MustParseGTIDSet(FlavorMySQL, uA+":1-10")
		if in.Replication != nil {
			in.Replication.Retrieved = MustParseGTIDSet(FlavorMySQL, uA+":1-10")
		}
	}
	return c, uuids
}

func TestDecideMySQL(t *testing.T) {
	c, uuids := mysqlCluster(3)
	// A replica ahead on the primary's own GTIDs (observed later) is not errant.
	c.Instances[1].Executed = MustParseGTIDSet(FlavorMySQL, strings.ToUpper(uA)+":1-12")
	// A write made on replica 2 is errant.
	c.Instances[2].Executed = MustParseGTIDSet(FlavorMySQL, uA+":1-10,"+uuids[2]+":1")
	writableUnlessReadOnly(&c)
	p, err := Decide(c)
	if err != nil {
		t.Fatal(err)
	}
	// MySQL's crash recovery commits what its binary log holds: an errant
	// instance is reported, never crashed.
	checkPlan(t, p, want{kind: ActionNone, target: -1, from: -1, primary: 0, errant: []int{2}, roles: "PRE", ready: "yyn"})

	// read_only ON with super_read_only OFF: not super read-only, yet not
	// writable for the applications.
	c, _ = mysqlCluster(3)
	writableUnlessReadOnly(&c)
	c.Instances[0].Writable = false
	p, _ = Decide(c)
	checkPlan(t, p, want{kind: ActionConfigurePrimary, target: 0, from: -1, primary: 0, ready: "nyy"})

	// The wait count matters on MySQL.
	c, _ = mysqlCluster(3)
	c.Instances[0].SemiSyncWaitCount = 2
	writableUnlessReadOnly(&c)
	p, _ = Decide(c)
	checkPlan(t, p, want{kind: ActionConfigurePrimary, target: 0, from: -1, primary: 0})

	// Failover on sets with holes: 1 has 1-12, 2 has 1-10 and 12 → 1 contains 2.
	c, _ = mysqlCluster(3)
	lose(&c, time.Minute)
	c.Instances[1].Replication.Retrieved = MustParseGTIDSet(FlavorMySQL, uA+":11-12")
	c.Instances[2].Replication.Retrieved = MustParseGTIDSet(FlavorMySQL, uA+":12")
	writableUnlessReadOnly(&c)
	p, _ = Decide(c)
	checkPlan(t, p, want{kind: ActionFailover, target: 1, from: 0, instances: []int{1, 2}, primary: 1})
}

// TestDecideMySQLQuorum: MySQL's primary waits for half the instances'
// acknowledgements, so with five instances a failover needs three of the
// four replicas, and a known errant one neither counts nor wins.
func TestDecideMySQLQuorum(t *testing.T) {
	c, uuids := mysqlCluster(5)
	lose(&c, time.Minute)
	c.KnownErrant = []int{1}
	c.Instances[1].Executed = MustParseGTIDSet(FlavorMySQL, uA+":1-10,"+uuids[1]+":1-50")
	c.Instances[3].Replication.Retrieved = MustParseGTIDSet(FlavorMySQL, uA+":1-13")
	writableUnlessReadOnly(&c)
	p, _ := Decide(c)
	checkPlan(t, p, want{kind: ActionFailover, target: 3, from: 0, instances: []int{2, 3, 4}, primary: 3, errant: []int{1}, roles: "PERRR"})

	c.Instances[4].Reachable = false
	p, _ = Decide(c)
	checkPlan(t, p, want{kind: ActionNone, target: -1, from: -1, primary: 0, errant: []int{1}, reason: "each commit waited for 2 of the 4 replicas, so 3 of them"})
}

func TestChooseCandidate(t *testing.T) {
	mk := func(i int, executed, retrieved string) Instance {
		in := Instance{Index: i, Executed: MustParseGTIDSet(FlavorMySQL, executed)}
		if retrieved != "" {
			in.Replication = &Replication{Retrieved: MustParseGTIDSet(FlavorMySQL, retrieved)}
		}
		return in
	}
	cases := []struct {
		name   string
		cands  []Instance
		prefer int
		want   int
		err    error
	}{
		{"none", nil, -1, -1, ErrNoCandidate},
		{"retrieved counts", []Instance{mk(1, uA+":1-10", ""), mk(2, uA+":1-8", uA+":9-11")}, -1, 2, nil},
		{"equal: lowest index", []Instance{mk(2, uA+":1-10", ""), mk(1, uA+":1-10", "")}, -1, 1, nil},
		{"equal: preferred", []Instance{mk(1, uA+":1-10", ""), mk(2, uA+":1-10", "")}, 2, 2, nil},
		{"preferred must contain all", []Instance{mk(1, uA+":1-10", ""), mk(2, uA+":1-9", "")}, 2, 1, nil},
		{"diverged", []Instance{mk(1, uA+":1-10", ""), mk(2, uA+":1-9,"+uB+":1", "")}, -1, -1, ErrNoCandidate},
	}
	for _, c := range cases {
		got, err := ChooseCandidate(c.cands, c.prefer)
		if got != c.want || !errors.Is(err, c.err) {
			t.Errorf("%s: ChooseCandidate = %d, %v; want %d, %v", c.name, got, err, c.want, c.err)
		}
	}
}

func TestDecideRejectsBadInput(t *testing.T) {
	cases := map[string]func(c *Cluster){
		"flavor":           func(c *Cluster) { c.Flavor = 0 },
		"count":            func(c *Cluster) { c.Instances = c.Instances[:2] },
		"zero replicas":    func(c *Cluster) { c.Replicas, c.Instances = 0, nil },
		"index":            func(c *Cluster) { c.Instances[1].Index = 2 },
		"primary range":    func(c *Cluster) { c.CurrentPrimary = 3 },
		"requested range":  func(c *Cluster) { c.RequestedPrimary = -2 },
		"executed flavor":  func(c *Cluster) { c.Instances[1].Executed = MustParseGTIDSet(FlavorMySQL, uA+":1") },
		"retrieved flavor": func(c *Cluster) { c.Instances[1].Replication.Retrieved = MustParseGTIDSet(FlavorMySQL, uA+":1") },
		"acks unknown":     func(c *Cluster) { c.SemiSyncAcks = 0 },
		"acks too many":    func(c *Cluster) { c.SemiSyncAcks = 3 },
	}
	for name, mod := range cases {
		c := base(3)
		mod(&c)
		if _, err := Decide(c); err == nil {
			t.Errorf("%s: Decide accepted bad input", name)
		}
	}
}
