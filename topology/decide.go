package topology

import (
	"fmt"
	"slices"
)

// Decide takes the decisions for one reconciliation: the primary, each instance's
// role and health, the errant instances, and the one next action. The reconciler
// acts, observes again and calls Decide again until the action is ActionNone; every
// decision is therefore made from a fresh observation and actions are idempotent.
//
// The order of precedence is: choose a first primary (bootstrap or adopt), fail over
// a lost primary, discard the unacknowledged transactions of an old primary, make
// writable non-primaries read-only, release commits stuck on a lost acknowledgement,
// fail over from a restarted primary a replica is ahead of, run a requested switchover, configure the primary,
// seed empty instances, configure replicas.
func Decide(c Cluster) (Plan, error) {
	if err := validate(c); err != nil {
		return Plan{}, err
	}
	p := Plan{
		Primary:           c.CurrentPrimary,
		Instances:         initialStates(c),
		SemiSyncWaitCount: SemiSyncWaitCount(c.Replicas),
		Action:            none(""),
	}
	if c.CurrentPrimary < 0 {
		decideNew(c, &p)
		return p, nil
	}
	prim := c.Instances[c.CurrentPrimary]
	if !prim.Reachable || lostData(c, prim) {
		decideLostPrimary(c, &p)
		return p, nil
	}
	decideWithPrimary(c, &p)
	return p, nil
}

// SemiSyncWaitCount is how many replica acknowledgements the primary of a
// cluster of n instances is configured to wait for: half the instances,
// rounded down (1 of 1 or 2 replicas, 2 of 3 or 4, ... 5 of 9), 0 for a
// single instance.
func SemiSyncWaitCount(n int) int { return n / 2 }

// validate checks that the input is consistent.
func validate(c Cluster) error {
	if c.Flavor != FlavorMySQL && c.Flavor != FlavorMariaDB {
		return fmt.Errorf("unknown flavor %d", int(c.Flavor))
	}
	if c.Replicas < 1 || len(c.Instances) != c.Replicas {
		return fmt.Errorf("%d instances observed for %d replicas", len(c.Instances), c.Replicas)
	}
	if c.CurrentPrimary < -1 || c.CurrentPrimary >= c.Replicas {
		return fmt.Errorf("current primary %d out of range", c.CurrentPrimary)
	}
	if c.RequestedPrimary < -1 || c.RequestedPrimary >= c.Replicas {
		return fmt.Errorf("requested primary %d out of range", c.RequestedPrimary)
	}
	if c.Replicas > 1 && (c.SemiSyncAcks < 1 || c.SemiSyncAcks > c.Replicas-1) {
		return fmt.Errorf("%d semi-sync acknowledgements per commit with %d replicas", c.SemiSyncAcks, c.Replicas-1)
	}
	for i, in := range c.Instances {
		if in.Index != i {
			return fmt.Errorf("instance at position %d has index %d", i, in.Index)
		}
		ok := okFlavor(c.Flavor, in.Executed)
		if in.Replication != nil {
			ok = ok && okFlavor(c.Flavor, in.Replication.Retrieved)
		}
		if !ok {
			return fmt.Errorf("instance %d: GTID set is not %s", i, c.Flavor)
		}
	}
	return nil
}

// okFlavor reports whether g can be combined with sets of flavor f.
func okFlavor(f Flavor, g GTIDSet) bool {
	return g.Flavor() == 0 || g.Flavor() == f
}

// initialStates marks unreachable instances Unknown and the rest Replica, to be
// refined by the decision functions.
func initialStates(c Cluster) []InstanceState {
	out := make([]InstanceState, len(c.Instances))
	for i, in := range c.Instances {
		out[i] = InstanceState{Index: i, Role: RoleReplica}
		switch {
		case !in.PodExists:
			out[i] = InstanceState{Index: i, Role: RoleUnknown, Reason: "pod does not exist"}
		case !in.Reachable:
			out[i] = InstanceState{Index: i, Role: RoleUnknown, Reason: "unreachable"}
		}
	}
	return out
}

// none returns ActionNone with a reason.
func none(reason string) Action {
	return Action{Kind: ActionNone, Target: -1, From: -1, Reason: reason}
}

// decideNew chooses the first primary of a cluster without status.currentPrimary:
// index 0 bootstraps an empty cluster; if instances already hold data (a cluster
// re-created on retained volumes), the one that has every transaction of the others
// is adopted once every instance can be observed.
func decideNew(c Cluster, p *Plan) {
	p.Primary = -1
	if allEmpty(c) {
		if !c.Instances[0].Reachable {
			p.Action = none("waiting for instance 0 to bootstrap the cluster")
			return
		}
		p.Primary = 0
		p.Action = Action{Kind: ActionBootstrap, Target: 0, From: -1,
			Reason: "new cluster: instance 0 becomes the primary"}
		return
	}
	for _, in := range c.Instances {
		if !in.Reachable {
			p.Action = none("instances hold data: waiting for every instance before choosing a primary")
			return
		}
	}
	cand, err := ChooseCandidate(c.Instances, 0)
	if err != nil {
		p.Action = none(err.Error())
		return
	}
	p.Primary = cand
	p.Instances[cand].Role = RolePrimary
	p.Action = Action{Kind: ActionConfigurePrimary, Target: cand, From: -1,
		Reason: fmt.Sprintf("adopting instance %d, which has every transaction of the others, as primary", cand)}
}

// allEmpty reports whether no reachable instance holds a transaction.
func allEmpty(c Cluster) bool {
	for _, in := range c.Instances {
		if in.Reachable && !in.Executed.IsEmpty() {
			return false
		}
	}
	return true
}

// lostData reports whether the primary came back empty while another instance has
// data: its volume was lost, and replicating from it would erase nothing but would
// make every replica look errant. It is handled like a lost primary.
func lostData(c Cluster, prim Instance) bool {
	return prim.Executed.IsEmpty() && !allEmpty(c)
}

// decideWithPrimary decides for a cluster whose primary is reachable and has data
// (or the whole cluster is empty).
func decideWithPrimary(c Cluster, p *Plan) {
	prim := c.Instances[c.CurrentPrimary]
	p.Errant = findErrant(c, prim)
	markRoles(c, p)
	steps := []func(Cluster, *Plan) bool{
		stepDiscard, stepReadOnly, stepHeartbeat, stepPrimaryBehind, stepSwitchover, stepPrimary, stepSeed, stepReplicas, stepSwitchoverBlocked,
	}
	for _, step := range steps {
		if step(c, p) {
			return
		}
	}
}

// findErrant returns the reachable non-primary instances that have transactions the
// primary does not. GTIDs originated by the primary itself are ignored: a replica
// observed after the primary may already have the primary's newest transactions.
// Unreachable instances keep their earlier verdict (KnownErrant).
func findErrant(c Cluster, prim Instance) []int {
	var out []int
	for _, in := range c.Instances {
		if in.Index == prim.Index {
			continue
		}
		if !in.Reachable {
			if slices.Contains(c.KnownErrant, in.Index) {
				out = append(out, in.Index)
			}
			continue
		}
		extra := in.Executed.Subtract(prim.Executed).WithoutSource(prim.SourceID)
		if !extra.IsEmpty() {
			out = append(out, in.Index)
		}
	}
	return out
}
