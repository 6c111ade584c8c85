package dataplane

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/controller/children"
	"github.com/example/mysql-operator/controller/vocabulary"
	"github.com/example/mysql-operator/dbop"
	"github.com/example/mysql-operator/topology"
)

// catchUpTimeout bounds the wait for a new primary to have every
// transaction of the old one (switchover) or of its relay log (failover).
const catchUpTimeout = 30 * time.Second

// actTimeout bounds a whole action: a server that stops answering mid-way
// fails it, and the next check decides again.
const actTimeout = catchUpTimeout + 30*time.Second

// act takes the plan's one next action through dbop. It returns the
// primary the cluster has once the action is done, -1 for none.
func (d *DataPlane) act(ctx context.Context, m *databasev1.MySQL, in *instances, plan topology.Plan, passwords map[string][]byte) (int, error) {
	a := plan.Action
	if a.Kind == topology.ActionNone {
		return plan.Primary, nil
	}
	ctx, cancel := context.WithTimeout(ctx, actTimeout)
	defer cancel()
	start := time.Now()
	ctrl.LoggerFrom(ctx).Info("topology action", "action", a.Kind, "target", a.Target, "from", a.From, "instances", a.Instances, "reason", a.Reason)
	var err error
	primary := plan.Primary
	note := a.Reason
	switch a.Kind {
	case topology.ActionBootstrap, topology.ActionConfigurePrimary:
		err = need(in, a.Target).Promote(ctx, plan.SemiSyncWaitCount)
	case topology.ActionSetReadOnly:
		err = each(in, a.Instances, func(db *dbop.Instance) error { return db.SetReadOnly(ctx) })
	case topology.ActionConfigureReplicas:
		err = d.configureReplicas(ctx, m, in, a.Instances, d.source(m, in, a.Target, passwords))
	case topology.ActionSwitchover:
		if err = d.switchover(ctx, m, in, plan, passwords); err == nil {
			d.demoted.mark(client.ObjectKeyFromObject(m), a.From)
		}
	case topology.ActionFailover:
		primary, err = d.failover(ctx, m, in, plan, passwords)
	case topology.ActionFence:
		err = each(in, a.Instances, func(db *dbop.Instance) error { return db.StopIOThread(ctx) })
	case topology.ActionHeartbeat:
		err = need(in, a.Target).Heartbeat(ctx)
	case topology.ActionDiscardUnacknowledged:
		err = d.discard(ctx, m, in, a.Target, passwords)
	case topology.ActionSeed:
		note, err = d.seed(ctx, m, in, a, passwords)
	default:
		err = fmt.Errorf("unknown action %s", a.Kind)
	}
	if err != nil {
		return -1, fmt.Errorf("%s: %w", a.Kind, err)
	}
	ctrl.LoggerFrom(ctx).Info("topology action done", "action", a.Kind, "primary", primary, "took", time.Since(start).String())
	if note != "" {
		vocabulary.Event(d.recorder, m, vocabulary.EventTopology, "%s: %s", a.Kind, note)
	}
	return primary, nil
}

// source is the replication source of the instance of index primary, as
// its replicas reach it, with the replication account.
func (d *DataPlane) source(m *databasev1.MySQL, in *instances, primary int, passwords map[string][]byte) dbop.Source {
	src := dbop.Source{Host: in.observed[primary].Host, Port: children.MySQLPort, User: dbop.ReplUser, Password: string(passwords[children.ReplPasswordKey])}
	if in.allServeTLS() {
		// Over TLS, the source's certificate checked against the MySQL's
		// CA, and for the name the replicas reach it by.
		src.SSL, src.SSLCA = true, children.TLSCAPath
		_, src.VerifyHost = children.ReplicationHost(m, in.pods[primary])
	}
	return src
}

// configureReplicas points each instance of idx at src, with semi-sync
// acknowledgement when the MySQL has replicas.
func (d *DataPlane) configureReplicas(ctx context.Context, m *databasev1.MySQL, in *instances, idx []int, src dbop.Source) error {
	return each(in, idx, func(db *dbop.Instance) error { return db.ConfigureReplica(ctx, src, m.Spec.Replicas > 1) })
}

// switchover moves the primary from a.From to a.Target with no acknowledged
// write lost: the old primary stops taking writes and its clients are cut
// off, the candidate waits until it has every transaction of the old one,
// is promoted, and the old primary and the others replicate from it.
func (d *DataPlane) switchover(ctx context.Context, m *databasev1.MySQL, in *instances, plan topology.Plan, passwords map[string][]byte) error {
	a := plan.Action
	old, cand := need(in, a.From), need(in, a.Target)
	if err := old.SetReadOnly(ctx); err != nil {
		return err
	}
	if _, err := old.KillConnections(ctx); err != nil {
		return err
	}
	st, err := old.Status(ctx)
	if err != nil {
		return err
	}
	executed, err := st.Executed()
	if err != nil {
		return err
	}
	if err := cand.WaitForGTID(ctx, executed.WaitTarget(), catchUpTimeout); err != nil {
		return err
	}
	if err := cand.Promote(ctx, plan.SemiSyncWaitCount); err != nil {
		return err
	}
	return d.configureReplicas(ctx, m, in, append([]int{a.From}, a.Instances...), d.source(m, in, a.Target, passwords))
}

// failover replaces a lost primary: every candidate stops receiving
// (fencing: nothing more arrives from the old primary), the one with the
// most retrieved and executed transactions is chosen on that frozen state,
// applies its relay log, is promoted, and the others replicate from it.
func (d *DataPlane) failover(ctx context.Context, m *databasev1.MySQL, in *instances, plan topology.Plan, passwords map[string][]byte) (int, error) {
	cands := plan.Action.Instances
	if err := each(in, cands, func(db *dbop.Instance) error { return db.StopIOThread(ctx) }); err != nil {
		return -1, err
	}
	frozen := make([]topology.Instance, 0, len(cands))
	for _, i := range cands {
		in.observe(ctx, i)
		if in.errs[i] != nil {
			return -1, in.errs[i]
		}
		frozen = append(frozen, in.observed[i])
	}
	next, err := topology.ChooseCandidate(frozen, -1)
	if err != nil {
		return -1, err
	}
	target := in.observed[next].Executed
	if rep := in.observed[next].Replication; rep != nil {
		target = target.Union(rep.Retrieved)
	}
	if err := need(in, next).WaitForGTID(ctx, target.WaitTarget(), catchUpTimeout); err != nil {
		return -1, err
	}
	if err := need(in, next).Promote(ctx, plan.SemiSyncWaitCount); err != nil {
		return -1, err
	}
	var others []int
	for _, i := range cands {
		if i != next {
			others = append(others, i)
		}
	}
	return next, d.configureReplicas(ctx, m, in, others, d.source(m, in, next, passwords))
}

// discard crashes the server of instance i through its agent, remembering
// the transactions it held: its crash recovery rolls back those no replica
// acknowledged (topology.ActionDiscardUnacknowledged).
func (d *DataPlane) discard(ctx context.Context, m *databasev1.MySQL, in *instances, i int, passwords map[string][]byte) error {
	d.discards.mark(client.ObjectKeyFromObject(m), i, in.observed[i].Executed.String())
	a, err := agentOf(m, in, i, passwords)
	if err != nil {
		return err
	}
	return a.Crash(ctx)
}

// need returns the connection of instance i; Decide acts only on
// reachable instances, so it exists.
func need(in *instances, i int) *dbop.Instance { return in.db[i] }

// each runs f on the instances of idx, all of them at once, each once, and
// joins the errors. At once matters for fencing: MariaDB's STOP SLAVE IO_THREAD
// waits for a receiver blocked connecting to a vanished primary in
// 2-second slices, and one after the other those waits add up.
func each(in *instances, idx []int, f func(*dbop.Instance) error) error {
	// Each instance once: two runs at once on one server interleave their
	// statements (a START between another's STOP and CHANGE).
	idx = slices.Compact(slices.Sorted(slices.Values(idx)))
	errs := make([]error, len(idx))
	var wg sync.WaitGroup
	for n, i := range idx {
		if in.db[i] == nil {
			errs[n] = fmt.Errorf("instance %d is not reachable", i)
			continue
		}
		wg.Go(func() { errs[n] = f(in.db[i]) })
	}
	wg.Wait()
	return errors.Join(errs...)
}
