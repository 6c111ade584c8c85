package bench

import (
	"context"
	"fmt"
	"slices"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/controller/children"
	"github.com/example/mysql-operator/controller/vocabulary"
	"github.com/example/mysql-operator/internal/cluster"
)

// reactionSamples is how many single changes each reaction figure is taken from.
const reactionSamples = 20

// measureReaction times one user's change among N MySQLs: a config change
// of one MySQL at a time, from the patch until its StatefulSet carries it.
// First with every other MySQL idle, then while the manager, restarted,
// resyncs every object from a cold cache. Each set uses MySQLs of its own,
// changed one after the other; the figure is the slowest of the set.
// It returns the peak RSS of the manager it restarted.
func measureReaction(ctx context.Context, c *cluster.Cluster, mgr *cluster.Manager, n int, log func(string, ...any), res *Result) (uint64, error) {
	k := min(reactionSamples, n/2)
	if k == 0 {
		return 0, nil
	}
	idle, err := reactions(ctx, c.Client, 0, k)
	if err != nil {
		return 0, fmt.Errorf("reaction, idle: %w", err)
	}
	res.ReactionIdle = slices.Max(idle)
	peak, _, err := mgr.Memory()
	if err != nil {
		return 0, err
	}
	mgr.Crash()
	// The resync has begun once the restarted manager reconciled once.
	if err := waitReconciled(ctx, mgr, 1, time.Minute); err != nil {
		return 0, fmt.Errorf("restart: %w", err)
	}
	during, err := reactions(ctx, c.Client, k, k)
	if err != nil {
		return 0, fmt.Errorf("reaction, resync: %w", err)
	}
	res.ReactionResync = slices.Max(during)
	ms, err := mgr.Metrics()
	if err != nil {
		return 0, err
	}
	res.ReactionInResync = ms.Sum("controller_runtime_reconcile_total", reconcileLabels) < float64(n)
	log("reaction: slowest of %d changes %s idle, %s during the resync (resync still running at the end: %t)",
		k, res.ReactionIdle.Round(time.Millisecond), res.ReactionResync.Round(time.Millisecond), res.ReactionInResync)
	return peak, waitReconciled(ctx, mgr, float64(n), 10*time.Minute)
}

// reactions changes the config of MySQLs from..from+k-1, one at a time,
// and returns how long each took to reach its StatefulSet.
func reactions(ctx context.Context, c client.Client, from, k int) ([]time.Duration, error) {
	out := make([]time.Duration, 0, k)
	for i := from; i < from+k; i++ {
		m := mysqlSpec(i)
		sts := &appsv1.StatefulSet{}
		key := client.ObjectKey{Namespace: namespace, Name: children.StatefulSetName(m)}
		if err := c.Get(ctx, key, sts); err != nil {
			return nil, err
		}
		was := sts.Spec.Template.Annotations[vocabulary.AnnotationConfigHash]
		begin := time.Now()
		patch := fmt.Appendf(nil, `{"spec":{"config":{"max_connections":"%d"}}}`, 200+i)
		if err := patchAndWait(ctx, c, m, patch, key, func(hash string) bool { return hash != was }); err != nil {
			return nil, fmt.Errorf("%s: the change did not reach its StatefulSet: %w", m.Name, err)
		}
		out = append(out, time.Since(begin))
		// Back to the spec it had: the StatefulSet returns to its revision,
		// so no pod waits for a roll-out no server on KWOK can let happen.
		if err := patchAndWait(ctx, c, m, []byte(`{"spec":{"config":null}}`), key, func(hash string) bool { return hash == was }); err != nil {
			return nil, fmt.Errorf("%s: the revert did not reach its StatefulSet: %w", m.Name, err)
		}
	}
	return out, nil
}

// patchAndWait merge-patches a MySQL and polls its StatefulSet until done
// says yes to its config hash.
func patchAndWait(ctx context.Context, c client.Client, m *databasev1.MySQL, patch []byte, key client.ObjectKey, done func(string) bool) error {
	if err := c.Patch(ctx, m, client.RawPatch("application/merge-patch+json", patch)); err != nil {
		return err
	}
	sts := &appsv1.StatefulSet{}
	return wait.PollUntilContextTimeout(ctx, 5*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, key, sts); err != nil {
			return false, nil
		}
		return done(sts.Spec.Template.Annotations[vocabulary.AnnotationConfigHash]), nil
	})
}
