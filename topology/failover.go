package topology

import (
	"errors"
	"fmt"
	"slices"
)

// decideLostPrimary decides when the current primary is unreachable or came back
// without its data: after the grace period, and only with enough replicas that
// one of them surely has every acknowledged transaction (FailoverQuorum), fail
// over to the replica that has every transaction of the others.
func decideLostPrimary(c Cluster, p *Plan) {
	cp := c.CurrentPrimary
	prim := c.Instances[cp]
	p.Errant = knownErrant(c)
	markLostRoles(c, p)
	voters := failoverVoters(c, p)
	if prim.Reachable {
		p.Instances[cp].Role, p.Instances[cp].Reason = RoleEmpty, "primary lost its data"
	} else if c.PrimaryUnreachableFor < c.FailoverGrace {
		p.Action = fenceEarly(c, voters, fmt.Sprintf("primary %d unreachable: failover once it has been for %s", cp, c.FailoverGrace))
		return
	}
	if need := FailoverQuorum(c.Replicas, c.SemiSyncAcks); len(voters) < need {
		p.FailoverBlocked = true
		p.Action = none(fmt.Sprintf("primary %d lost, but no failover: each commit waited for %d of the %d replicas, "+
			"so %d of them must be reachable, hold data and not be errant for one to surely have every acknowledged transaction; %d are",
			cp, c.SemiSyncAcks, c.Replicas-1, need, len(voters)))
		return
	}
	cands := make([]Instance, 0, len(voters))
	for _, i := range voters {
		cands = append(cands, c.Instances[i])
	}
	cand, err := ChooseCandidate(cands, c.RequestedPrimary)
	if err != nil {
		p.FailoverBlocked = true
		p.Action = none(fmt.Sprintf("primary %d lost, but no failover: %v", cp, err))
		return
	}
	p.Primary = cand
	p.Action = Action{Kind: ActionFailover, Target: cand, From: cp, Instances: voters,
		Reason: fmt.Sprintf("primary %d lost: fail over to instance %d", cp, cand)}
}

// FailoverQuorum is how many of the n-1 replicas of a cluster of n instances
// must be candidates (reachable, not errant, holding data) for a failover when
// each commit waited for acks of them: with at most acks-1 replicas left out,
// at least one candidate acknowledged every acknowledged transaction, and
// ChooseCandidate, which picks the candidate holding every other's, has it.
// Any fewer, and every replica that acknowledged the last commit may be among
// those left out. It is n-1 (every replica) for acks = 1, which is MariaDB's
// semi-sync whatever the cluster size.
func FailoverQuorum(n, acks int) int { return n - acks }

// fenceEarly is what to do while a lost primary's grace runs: stop the
// receivers of the candidates that still run one, so that the failover at
// the grace's end need not wait for a receiver stuck connecting to the
// lost address (STOP REPLICA IO_THREAD waits for it, up to the replica net
// timeout); else wait, for why.
func fenceEarly(c Cluster, voters []int, why string) Action {
	var running []int
	for _, i := range voters {
		if r := c.Instances[i].Replication; r != nil && (r.IORunning || r.IOConnecting) {
			running = append(running, i)
		}
	}
	if len(running) == 0 {
		return none(why)
	}
	return Action{Kind: ActionFence, Target: -1, From: c.CurrentPrimary, Instances: running,
		Reason: why + "; its replicas stop receiving meanwhile"}
}

// knownErrant returns the in-range, non-primary instances of c.KnownErrant, sorted.
func knownErrant(c Cluster) []int {
	var out []int
	for _, i := range c.KnownErrant {
		if i >= 0 && i < c.Replicas && i != c.CurrentPrimary && !slices.Contains(out, i) {
			out = append(out, i)
		}
	}
	slices.Sort(out)
	return out
}

// markLostRoles sets roles while the primary is lost: reachable instances are
// replicas (not ready: they have no source) unless known errant.
func markLostRoles(c Cluster, p *Plan) {
	for _, in := range c.Instances {
		st := &p.Instances[in.Index]
		switch {
		case in.Index == c.CurrentPrimary:
			st.Role = RolePrimary
		case slices.Contains(p.Errant, in.Index):
			st.Role = RoleErrant
			if in.Reachable {
				st.Reason = "has transactions the primary never had"
			}
		case in.Reachable:
			st.Role, st.Reason = RoleReplica, "primary lost"
		}
	}
}

// failoverVoters returns the instances that count for the failover quorum and may
// be promoted: reachable, not the primary, not errant, and holding data (an empty
// instance acknowledged nothing).
func failoverVoters(c Cluster, p *Plan) []int {
	var out []int
	for _, in := range c.Instances {
		if in.Index == c.CurrentPrimary || !in.Reachable || slices.Contains(p.Errant, in.Index) {
			continue
		}
		if in.Executed.IsEmpty() && (in.Replication == nil || in.Replication.Retrieved.IsEmpty()) {
			continue
		}
		out = append(out, in.Index)
	}
	return out
}

// ErrNoCandidate is returned by ChooseCandidate when no instance has every
// transaction of the others.
var ErrNoCandidate = errors.New("no candidate has every transaction of the others")

// ChooseCandidate returns the index of the instance whose transactions (executed
// united with retrieved, so a replica is judged on what it will have once its relay
// log is applied) include every other candidate's. Among equals, prefer is chosen if
// it is one of them, else the lowest index. During a failover the reconciler calls
// it again after fencing (STOP REPLICA IO_THREAD on every candidate) and
// re-observing, so that the choice is made on sets that no longer grow.
func ChooseCandidate(cands []Instance, prefer int) (int, error) {
	if len(cands) == 0 {
		return -1, ErrNoCandidate
	}
	sets := make([]GTIDSet, len(cands))
	for i, in := range cands {
		sets[i] = in.Executed
		if in.Replication != nil {
			sets[i] = sets[i].Union(in.Replication.Retrieved)
		}
	}
	best := -1
	for i, in := range cands {
		if !containsAll(sets[i], sets) {
			continue
		}
		if best < 0 || in.Index == prefer || (cands[best].Index != prefer && in.Index < cands[best].Index) {
			best = i
		}
	}
	if best < 0 {
		return -1, ErrNoCandidate
	}
	return cands[best].Index, nil
}

// containsAll reports whether s contains every set of all.
func containsAll(s GTIDSet, all []GTIDSet) bool {
	for _, o := range all {
		if !s.Contains(o) {
			return false
		}
	}
	return true
}
