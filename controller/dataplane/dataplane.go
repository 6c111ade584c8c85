package dataplane

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/controller/children"
	"github.com/example/mysql-operator/dbop"
	"github.com/example/mysql-operator/topology"
)

// Defaults of the data plane's settings (the manager's flags).
const (
	// DefaultCheckInterval is how often an idle MySQL's servers are checked.
	DefaultCheckInterval = 10 * time.Second
	// DefaultFailoverGrace is how long a primary may be unreachable before
	// the operator fails over, counted from the first evidence: its pod
	// marked not ready by the kubelet (two failed probes, a second apart),
	// or the operator's first failed check. A server the kubelet restarts
	// in place may be failed over instead; that loses nothing.
	DefaultFailoverGrace = 3 * time.Second
	// DefaultMaxLag is the replication lag above which a replica is not ready.
	DefaultMaxLag = 30 * time.Second
)

// DataPlane runs the observe-decide-act loop of the MySQLs' servers. One
// value serves every MySQL; it keeps, per MySQL, the connections to its
// servers, since when its primary has been unreachable and the old primary
// of its last switchover. It is safe for concurrent use.
type DataPlane struct {
	client        client.Client
	recorder      events.EventRecorder
	failoverGrace time.Duration
	maxLag        time.Duration

	// pool holds the connections to the servers, reused from check to
	// check, and which addresses each MySQL uses.
	pool *dbop.Pool
	// watch times the primaries that cannot be reached, and their stuck
	// commits.
	watch *primaryWatch
	// demoted holds the old primaries whose clients are being cut off.
	demoted *demotions
	// discards holds the old primaries crashed to discard what no replica
	// acknowledged.
	discards *discards
}

// New returns the data plane of a manager: c patches the pods' role
// labels and deletes pods to roll them out, rec records Topology events;
// failoverGrace is how long a primary may be unreachable before failover,
// maxLag the replication lag above which a replica is not ready.
func New(c client.Client, rec events.EventRecorder, failoverGrace, maxLag time.Duration) *DataPlane {
	return &DataPlane{client: c, recorder: rec, failoverGrace: failoverGrace, maxLag: maxLag,
		pool: dbop.NewPool(dbop.DefaultOptions()), watch: newPrimaryWatch(), demoted: newDemotions(),
		discards: newDiscards()}
}

// Report is what one pass of the data plane tells the MySQL's status.
type Report struct {
	// Observed says the servers were observed: Primary, Instances and
	// Errant hold.
	Observed bool
	// Primary is the pod made primary, "" for none.
	Primary string
	// Instances are every instance's role and health.
	Instances []databasev1.InstanceStatus
	// Errant are the instances with errant transactions.
	Errant []string
	// Waiting says which step the database is in (a topology action, a
	// roll-out); empty when none is.
	Waiting string
	// Acted says an action was taken: look again soon.
	Acted bool
	// Recheck is how soon to look again, zero for no sooner than the
	// periodic check.
	Recheck time.Duration
	// Reason, when set, is the Reconciling reason the MySQL's status
	// takes, with Waiting as its message: its primary is unreachable, or
	// lost and no failover can be made safely.
	Reason string
	// Switchover answers a switchover asked for with AnnotationSwitchover;
	// nil while none is answered.
	Switchover *databasev1.SwitchoverStatus
	// Failover is the failover made in this pass; nil when none was.
	Failover *databasev1.PrimaryChange
	// Restore is what the restore that made instance 0 reached, read once
	// from its agent when status has none yet.
	Restore *databasev1.RestoreStatus
}

// Secrets are what the data plane reads of a MySQL's Secrets.
type Secrets struct {
	// Passwords are the operator's accounts' passwords, by key.
	Passwords map[string][]byte
	// TLS is the data of the servers' certificate Secret (its CA verifies
	// the servers; its key pair is the operator's to the agents); nil
	// while TLS is disabled.
	TLS map[string][]byte
}

// Reconcile is the data plane of one reconcile of m, whose pods are pods
// and whose operator accounts' passwords and CA are in s: it observes every
// server (one status query each), lets topology.Decide choose the one next
// step, takes it, labels the pods with their roles and reports what the
// status says of the database. Decisions are pure functions of the
// observation; this function only observes and acts. The report holds
// what was learnt before an error too.
func (d *DataPlane) Reconcile(ctx context.Context, m *databasev1.MySQL, pods []corev1.Pod, s Secrets) (Report, error) {
	var rep Report
	passwords := s.Passwords
	in := d.observeInstances(ctx, m, pods, dbop.Credentials{User: dbop.AdminUser, Password: string(passwords[children.AdminPasswordKey])}, s.TLS)
	rev, err := d.readRevisions(ctx, m, in)
	if err != nil {
		return rep, err
	}
	rep.Restore = readRestore(ctx, m, in, passwords)
	c, observed := d.clusterOf(m, in), time.Now()
	req, asked := pendingSwitchover(m, observed)
	switch to := rev.handOver(c.CurrentPrimary); {
	case to >= 0:
		c.RequestedPrimary = to
	case asked && req.refused == "" && c.RequestedPrimary < 0:
		c.RequestedPrimary = req.target
	}
	rep.Recheck = recheck(c)
	plan, err := topology.Decide(c)
	if err != nil {
		return rep, fmt.Errorf("decide the topology: %w", err)
	}
	rep.Reason = primaryReason(c, plan)
	primary, err := d.act(ctx, m, in, plan, passwords)
	if err != nil {
		return rep, err
	}
	if plan.Action.Kind == topology.ActionFence {
		// Fenced: look again when the grace ends, or at once if it has.
		rep.Recheck = max(c.FailoverGrace-c.PrimaryUnreachableFor-time.Since(observed), 10*time.Millisecond)
	}
	if asked {
		rep.Switchover = req.answer(m, primary, time.Now())
	}
	if plan.Action.Kind == topology.ActionFailover && primary >= 0 {
		rep.Failover = &databasev1.PrimaryChange{From: children.PodName(m, plan.Action.From), To: children.PodName(m, primary),
			Time: metav1.Now()}
	}
	plan = plan.After(primary)
	if err := d.labelRoles(ctx, m, in, plan, primary); err != nil {
		return rep, err
	}
	d.cutOffDemoted(ctx, client.ObjectKeyFromObject(m), in, primary, &rep)
	recordDatabase(m, in, plan, primary, &rep)
	rolled, err := d.rollOut(ctx, m, in, rev, plan, primary)
	if rolled {
		rep.Acted, rep.Waiting = true, "rolling out revision "+rev.update
	}
	return rep, err
}

// Forget drops all the data plane keeps of the MySQL key, which is gone:
// its connections are closed.
func (d *DataPlane) Forget(key types.NamespacedName) {
	d.pool.Release(key.String())
	d.watch.forget(key)
	d.demoted.forget(key)
	d.discards.forget(key)
}

// clusterOf is the input of topology.Decide: the spec, what status recorded
// and what this check observed.
func (d *DataPlane) clusterOf(m *databasev1.MySQL, in *instances) topology.Cluster {
	c := topology.Cluster{
		Flavor:           topology.FlavorMySQL,
		Replicas:         len(in.observed),
		CurrentPrimary:   children.PodIndex(m, m.Status.CurrentPrimary),
		RequestedPrimary: requestedPrimary(m),
		FailoverGrace:    d.failoverGrace,
		MaxLag:           d.maxLag,
		Instances:        in.observed,
	}
	if m.Spec.Engine == databasev1.EngineMariaDB {
		c.Flavor = topology.FlavorMariaDB
	}
	c.SemiSyncAcks = dbop.DialectOf(c.Flavor).SemiSyncAcks(topology.SemiSyncWaitCount(c.Replicas))
	// MySQL always replicates over TLS (SOURCE_SSL=1); MariaDB once every
	// instance has the certificate (see source).
	c.ReplicationTLS = c.Flavor == topology.FlavorMySQL || in.allServeTLS()
	key := client.ObjectKeyFromObject(m)
	crashed := d.discards.of(key)
	for _, s := range m.Status.Instances {
		i := children.PodIndex(m, s.Name)
		if i < 0 || i >= c.Replicas || s.Role != databasev1.RoleErrant {
			continue
		}
		if _, ok := crashed[i]; ok && !in.observed[i].Reachable {
			continue // restarting from the crash that discards its errant transactions
		}
		c.KnownErrant = append(c.KnownErrant, i)
	}
	for i, executed := range crashed {
		if i < c.Replicas && in.observed[i].Reachable && in.observed[i].Executed.String() == executed {
			c.Discarded = append(c.Discarded, i)
		}
	}
	slices.Sort(c.Discarded)
	if c.CurrentPrimary < 0 {
		return c
	}
	prim := in.observed[c.CurrentPrimary]
	c.PrimaryUnreachableFor = d.watch.unreachableFor(key, !prim.Reachable, notReadySince(in.pods[c.CurrentPrimary]))
	c.CommitsStuckFor = d.watch.stuckFor(key, c.CurrentPrimary, prim.SemiSyncWaitSessions, prim.Executed.String())
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
	if children.PodIndex(m, m.Status.CurrentPrimary) >= int(m.Spec.Replicas) {
		return max(preferred, 0)
	}
	return preferred
}
