package topology

import (
	"fmt"
	"slices"
	"time"
)

// The steps that repair what a crash, a partition or a lost acknowledgement
// leave behind on a primary or an old one.

// stepDiscard crashes, once, an old primary back from a partition: a
// reachable instance that is not the primary but is still a semi-sync
// source, and either has commits waiting for acknowledgements that will
// never come (they hold the commit lock, so that it cannot even be made
// read-only) or, on MariaDB, holds extra transactions all of its own, which
// no replica acknowledged (see ActionDiscardUnacknowledged). It goes before
// stepReadOnly, which would wait on those commits. An errant write made on
// a replica is never crashed; an old primary still errant after its crash
// is kept from another by Discarded, and reported.
func stepDiscard(c Cluster, p *Plan) bool {
	prim := c.Instances[c.CurrentPrimary]
	for _, in := range c.Instances {
		i := in.Index
		if i == c.CurrentPrimary || !in.Reachable || !in.SemiSyncSource || slices.Contains(c.Discarded, i) {
			continue
		}
		extra := in.Executed.Subtract(prim.Executed).WithoutSource(prim.SourceID)
		own := c.Flavor == FlavorMariaDB && !extra.IsEmpty() && extra.WithoutSource(in.SourceID).IsEmpty()
		if in.SemiSyncWaitSessions == 0 && !own {
			continue
		}
		p.Action = Action{Kind: ActionDiscardUnacknowledged, Target: i, From: -1,
			Reason: fmt.Sprintf("instance %d, an old primary, has %d commits waiting for acknowledgements and transactions %q "+
				"no replica acknowledged: its server is crashed so that its recovery rolls them back", i, in.SemiSyncWaitSessions, extra)}
		return true
	}
	return false
}

// stepPrimaryBehind fails over from a read-only primary that a replica is
// ahead of: the primary crashed, and its crash recovery rolled back
// transactions no replica acknowledged (MariaDB, started as a replica),
// some of which a replica had received nonetheless (the acknowledgement
// was lost with the crash). Made writable, it would write other
// transactions under the same GTIDs; the replica takes over instead. A
// primary is read-only only once restarted (or demoted by hand), when no
// new transaction makes the comparison race.
func stepPrimaryBehind(c Cluster, p *Plan) bool {
	cp := c.CurrentPrimary
	prim := c.Instances[cp]
	if prim.Writable {
		return false
	}
	voters := failoverVoters(c, p)
	ahead := false
	for _, i := range voters {
		if !prim.Executed.Contains(retrievedOrExecuted(c.Instances[i])) {
			ahead = true
		}
	}
	if !ahead {
		return false
	}
	cands := []Instance{prim}
	for _, i := range voters {
		cands = append(cands, c.Instances[i])
	}
	cand, err := ChooseCandidate(cands, c.RequestedPrimary)
	if err != nil || cand == cp {
		p.Action = none(fmt.Sprintf("primary %d is behind a replica, and no instance has every transaction of the others", cp))
		return true
	}
	p.Primary = cand
	p.Action = Action{Kind: ActionFailover, Target: cand, From: cp, Instances: voters,
		Reason: fmt.Sprintf("primary %d restarted without transactions a replica received: fail over to instance %d", cp, cand)}
	return true
}

// retrievedOrExecuted is what an instance has or will have once its relay
// log is applied.
func retrievedOrExecuted(in Instance) GTIDSet {
	if in.Replication != nil {
		return in.Executed.Union(in.Replication.Retrieved)
	}
	return in.Executed
}

// CommitStuckGrace is how long commits may wait for acknowledgements with
// nothing moving, though enough replicas hold everything, before a
// heartbeat releases them: far longer than an acknowledgement's round trip.
const CommitStuckGrace = 2 * time.Second

// stepHeartbeat writes a heartbeat on a primary whose commits wait for
// acknowledgements that were lost, when at least SemiSyncAcks semi-sync
// replicas of it already hold every transaction it has: the heartbeat's
// acknowledgement releases the commits before it (ActionHeartbeat).
func stepHeartbeat(c Cluster, p *Plan) bool {
	prim := c.Instances[c.CurrentPrimary]
	if c.CommitsStuckFor < CommitStuckGrace || prim.SemiSyncWaitSessions == 0 {
		return false
	}
	holders := 0
	for _, in := range c.Instances {
		r := in.Replication
		if in.Index == prim.Index || !in.Reachable || !in.SemiSyncReplica || r == nil || !r.IORunning ||
			r.SourceHost != prim.Host || r.SourcePort != prim.Port {
			continue
		}
		if in.Executed.Union(r.Retrieved).Contains(prim.Executed) {
			holders++
		}
	}
	if holders < max(c.SemiSyncAcks, 1) {
		return false
	}
	p.Action = Action{Kind: ActionHeartbeat, Target: prim.Index, From: -1,
		Reason: fmt.Sprintf("%d commits on primary %d have waited %s for acknowledgements of transactions %d replicas hold already",
			prim.SemiSyncWaitSessions, prim.Index, c.CommitsStuckFor.Round(time.Second), holders)}
	return true
}
