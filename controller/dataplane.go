package controller

import (
	"context"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/dbop"
	"github.com/example/mysql-operator/topology"
)

// Defaults of the data plane's settings (the manager's flags).
const (
	// DefaultCheckInterval is how often an idle MySQL's servers are checked.
	DefaultCheckInterval = 10 * time.Second
	// DefaultFailoverGrace is how long a primary may be unreachable, with its
	// pod not ready, before the operator fails over.
	DefaultFailoverGrace = 5 * time.Second
	// DefaultMaxLag is the replication lag above which a replica is not ready.
	DefaultMaxLag = 30 * time.Second
)

// reconcileDatabase is the data plane of one reconcile: it observes every
// server (one status query each), lets topology.Decide choose the one next
// step, takes it, labels the pods with their roles and records in obs what
// the status says of the database. Decisions are pure functions of the
// observation; this function only observes and acts.
func (r *Reconciler) reconcileDatabase(ctx context.Context, m *databasev1.MySQL, passwords map[string][]byte, obs *observation) error {
	in := r.observeInstances(ctx, m, obs.pods, dbop.Credentials{User: dbop.AdminUser, Password: string(passwords[adminPasswordKey])})
	rev, err := r.readRevisions(ctx, m, in)
	if err != nil {
		return err
	}
	c := r.clusterOf(m, in)
	if to := rev.handOver(c.CurrentPrimary); to >= 0 {
		c.RequestedPrimary = to
	}
	if c.CurrentPrimary >= 0 && !c.Instances[c.CurrentPrimary].Reachable {
		// Look again when the failover grace ends, not a check later.
		obs.recheck = soonest(obs.recheck, c.FailoverGrace-c.PrimaryUnreachableFor+100*time.Millisecond)
	}
	plan, err := topology.Decide(c)
	if err != nil {
		return fmt.Errorf("decide the topology: %w", err)
	}
	primary, err := r.act(ctx, m, in, plan, passwords)
	if err != nil {
		return err
	}
	plan = plan.After(primary)
	if err := r.labelRoles(ctx, m, in, plan, primary); err != nil {
		return err
	}
	r.cutOffDemoted(ctx, client.ObjectKeyFromObject(m), in, primary, obs)
	recordDatabase(m, in, plan, primary, obs)
	rolled, err := r.rollOut(ctx, m, in, rev, plan, primary)
	if rolled {
		obs.acted, obs.dbWaiting = true, "rolling out revision "+rev.update
	}
	return err
}

// clusterOf is the input of topology.Decide: the spec, what status recorded
// and what this check observed.
func (r *Reconciler) clusterOf(m *databasev1.MySQL, in *instances) topology.Cluster {
	c := topology.Cluster{
		Flavor:           topology.FlavorMySQL,
		Replicas:         len(in.observed),
		CurrentPrimary:   podIndex(m, m.Status.CurrentPrimary),
		RequestedPrimary: requestedPrimary(m),
		FailoverGrace:    r.FailoverGrace,
		MaxLag:           r.MaxLag,
		Instances:        in.observed,
	}
	if m.Spec.Engine == databasev1.EngineMariaDB {
		c.Flavor = topology.FlavorMariaDB
	}
	for _, s := range m.Status.Instances {
		if i := podIndex(m, s.Name); i >= 0 && i < c.Replicas && s.Role == databasev1.RoleErrant {
			c.KnownErrant = append(c.KnownErrant, i)
		}
	}
	lost := c.CurrentPrimary >= 0 && !in.observed[c.CurrentPrimary].Reachable
	c.PrimaryUnreachableFor = r.unreachable.since(types.NamespacedName{Namespace: m.Namespace, Name: m.Name}, lost)
	return c
}

// requestedPrimary is the instance the primary should move to: one that
// stays when a scale-in removes the primary's (spec.preferredPrimary if it
// stays, else 0), else spec.preferredPrimary, else none (-1).
func requestedPrimary(m *databasev1.MySQL) int {
	preferred := -1
	if p := m.Spec.PreferredPrimary; p != nil && *p < m.Spec.Replicas {
		preferred = int(*p)
	}
	if podIndex(m, m.Status.CurrentPrimary) >= int(m.Spec.Replicas) {
		return max(preferred, 0)
	}
	return preferred
}

// unreachableSince remembers, per MySQL, since when its primary has been
// unreachable. It is in memory: a restarted operator starts the failover
// grace again, the safe direction.
type unreachableSince struct {
	mu    sync.Mutex
	now   func() time.Time
	first map[types.NamespacedName]time.Time
}

func newUnreachableSince() *unreachableSince {
	return &unreachableSince{now: time.Now, first: map[types.NamespacedName]time.Time{}}
}

// since records whether key's primary is unreachable now and returns for
// how long it has been; zero when it is reachable.
func (u *unreachableSince) since(key types.NamespacedName, unreachable bool) time.Duration {
	u.mu.Lock()
	defer u.mu.Unlock()
	if !unreachable {
		delete(u.first, key)
		return 0
	}
	first, ok := u.first[key]
	if !ok {
		u.first[key] = u.now()
		return 0
	}
	return u.now().Sub(first)
}

// forget drops key, for a MySQL that is gone.
func (u *unreachableSince) forget(key types.NamespacedName) { u.since(key, false) }
