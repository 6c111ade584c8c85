package topology

import (
	"fmt"
	"slices"
	"time"
)

// markRoles sets the role and health of every reachable instance when the primary
// is reachable.
func markRoles(c Cluster, p *Plan) {
	prim := c.Instances[c.CurrentPrimary]
	for _, in := range c.Instances {
		st := &p.Instances[in.Index]
		switch {
		case in.Index == prim.Index:
			st.Role = RolePrimary
			st.Ready, st.Reason = primaryHealth(in)
		case !in.Reachable:
			// keep Unknown, but report a known errant instance as such
			if slices.Contains(p.Errant, in.Index) {
				st.Role = RoleErrant
			}
		case slices.Contains(p.Errant, in.Index):
			st.Role, st.Reason = RoleErrant, "has transactions the primary never had"
		case needsSeed(prim, in):
			st.Role, st.Reason = RoleEmpty, "empty: waiting to be seeded"
		default:
			st.Role = RoleReplica
			st.Ready, st.Reason = replicaHealth(c, prim, in)
		}
	}
}

// primaryHealth is the health of the primary: reachable, pod ready and writable.
func primaryHealth(in Instance) (bool, string) {
	switch {
	case !in.PodReady:
		return false, "pod not ready"
	case !in.Writable:
		return false, "read-only"
	}
	return true, ""
}

// needsSeed reports whether in is empty while the primary has data.
func needsSeed(prim, in Instance) bool {
	return in.Executed.IsEmpty() && !prim.Executed.IsEmpty()
}

// replicaHealth is the health of a replica: it replicates from the primary, both
// threads run without error, and its lag is known and under c.MaxLag.
func replicaHealth(c Cluster, prim, in Instance) (bool, string) {
	r := in.Replication
	switch {
	case !in.PodReady:
		return false, "pod not ready"
	case r == nil:
		return false, "replication not configured"
	case r.SourceHost != prim.Host || r.SourcePort != prim.Port:
		return false, fmt.Sprintf("replicates from %s:%d, not from the primary", r.SourceHost, r.SourcePort)
	case r.LastIOError != "":
		return false, "I/O thread error: " + r.LastIOError
	case r.LastSQLError != "":
		return false, "SQL thread error: " + r.LastSQLError
	case r.IOConnecting:
		return false, "I/O thread connecting"
	case !r.IORunning || !r.SQLRunning:
		return false, "replication threads not running"
	case r.Lag == nil:
		return false, "lag unknown"
	case *r.Lag > c.MaxLag:
		return false, fmt.Sprintf("lag %s above %s", *r.Lag, c.MaxLag)
	}
	return true, ""
}

// replicaNeedsConfig reports whether a replica must be (re)pointed at the primary:
// replication is not configured or points elsewhere, a thread is stopped without an
// error (fenced, or never started) or a receiver on a lost connection (fenced while
// it reconnected), TLS is not as the cluster wants it (turned on or off since it
// was configured), or semi-sync acknowledgement does not match the cluster size.
// A thread stopped on another error is reported, not retried blindly.
func replicaNeedsConfig(c Cluster, prim, in Instance) bool {
	r := in.Replication
	if r == nil || r.SourceHost != prim.Host || r.SourcePort != prim.Port {
		return true
	}
	ioStopped := !r.IORunning && !r.IOConnecting && (r.LastIOError == "" || r.IOErrorTransient)
	if ioStopped || (!r.SQLRunning && r.LastSQLError == "") || r.TLS != c.ReplicationTLS {
		return true
	}
	return in.SemiSyncReplica != (c.Replicas > 1)
}

// stepReadOnly makes every reachable writable non-primary read-only, errant ones
// included: a returning old primary must not take writes.
func stepReadOnly(c Cluster, p *Plan) bool {
	var ids []int
	for _, in := range c.Instances {
		if in.Index != c.CurrentPrimary && in.Reachable && !in.ReadOnly {
			ids = append(ids, in.Index)
		}
	}
	if len(ids) == 0 {
		return false
	}
	p.Action = Action{Kind: ActionSetReadOnly, Target: -1, From: -1, Instances: ids,
		Reason: fmt.Sprintf("instances %v are writable but not the primary", ids)}
	return true
}

// switchoverBlocker returns why the requested switchover cannot run, "" if it can.
func switchoverBlocker(c Cluster, p *Plan) string {
	t := c.RequestedPrimary
	switch {
	case t < 0 || t == c.CurrentPrimary:
		return ""
	case p.Instances[t].Role != RoleReplica:
		return fmt.Sprintf("instance %d is %s", t, p.Instances[t].Role)
	case !p.Instances[t].Ready:
		return fmt.Sprintf("instance %d is not ready: %s", t, p.Instances[t].Reason)
	case lag(c.Instances[t]) > switchoverMaxLag:
		// The old primary refuses writes until the candidate has applied
		// everything: a candidate far behind would make that pause long.
		return fmt.Sprintf("instance %d is catching up (lag %s)", t, lag(c.Instances[t]))
	}
	return ""
}

// switchoverMaxLag is the most a switchover's candidate may lag: the
// writes pause while it applies what it lacks.
const switchoverMaxLag = time.Second

// lag is a replica's replication lag, zero when unknown.
func lag(in Instance) time.Duration {
	if r := in.Replication; r != nil && r.Lag != nil {
		return *r.Lag
	}
	return 0
}

// stepSwitchover runs a requested switchover to a ready replica.
func stepSwitchover(c Cluster, p *Plan) bool {
	t := c.RequestedPrimary
	if t < 0 || t == c.CurrentPrimary || switchoverBlocker(c, p) != "" {
		return false
	}
	p.Primary = t
	p.Action = Action{Kind: ActionSwitchover, Target: t, From: c.CurrentPrimary,
		Instances: repointable(c, p, t, c.CurrentPrimary),
		Reason:    fmt.Sprintf("switchover requested from instance %d to %d", c.CurrentPrimary, t)}
	return true
}

// stepSwitchoverBlocked reports a requested switchover that cannot run, once
// nothing else is left to do.
func stepSwitchoverBlocked(c Cluster, p *Plan) bool {
	if why := switchoverBlocker(c, p); why != "" {
		p.Action = none("switchover to instance " + fmt.Sprint(c.RequestedPrimary) + " waits: " + why)
		return true
	}
	return false
}

// repointable returns the reachable replicas other than the new primary that must
// replicate from it afterwards: not errant, not empty. The old primary (from) is
// included when reachable: it rejoins as a replica.
func repointable(c Cluster, p *Plan, newPrimary, from int) []int {
	var ids []int
	for _, in := range c.Instances {
		role := p.Instances[in.Index].Role
		if in.Index == newPrimary || !in.Reachable {
			continue
		}
		if in.Index == from || role == RoleReplica {
			ids = append(ids, in.Index)
		}
	}
	return ids
}

// stepPrimary configures the primary when it is read-only, still replicates, or its
// semi-sync settings do not match the cluster size.
func stepPrimary(c Cluster, p *Plan) bool {
	prim := c.Instances[c.CurrentPrimary]
	wantSemi := p.SemiSyncWaitCount > 0
	ok := prim.Writable && prim.Replication == nil && prim.SemiSyncSource == wantSemi &&
		(!wantSemi || c.Flavor == FlavorMariaDB || prim.SemiSyncWaitCount == p.SemiSyncWaitCount)
	if ok {
		return false
	}
	p.Action = Action{Kind: ActionConfigurePrimary, Target: prim.Index, From: -1,
		Reason: fmt.Sprintf("primary %d is not configured as a writable source", prim.Index)}
	return true
}

// stepSeed seeds the lowest empty instance from a donor: a ready replica if there is
// one (to spare the primary), else the primary.
func stepSeed(c Cluster, p *Plan) bool {
	for _, st := range p.Instances {
		if st.Role != RoleEmpty {
			continue
		}
		donor := c.CurrentPrimary
		for _, d := range p.Instances {
			if d.Role == RoleReplica && d.Ready {
				donor = d.Index
				break
			}
		}
		p.Action = Action{Kind: ActionSeed, Target: st.Index, From: donor,
			Reason: fmt.Sprintf("instance %d is empty: seed it from instance %d", st.Index, donor)}
		return true
	}
	return false
}

// stepReplicas configures every replica that does not replicate properly from the
// primary.
func stepReplicas(c Cluster, p *Plan) bool {
	prim := c.Instances[c.CurrentPrimary]
	var ids []int
	for _, in := range c.Instances {
		if p.Instances[in.Index].Role == RoleReplica && in.Reachable && in.Index != prim.Index &&
			replicaNeedsConfig(c, prim, in) {
			ids = append(ids, in.Index)
		}
	}
	if len(ids) == 0 {
		return false
	}
	p.Action = Action{Kind: ActionConfigureReplicas, Target: prim.Index, From: -1, Instances: ids,
		Reason: fmt.Sprintf("instances %v must replicate from primary %d", ids, prim.Index)}
	return true
}
