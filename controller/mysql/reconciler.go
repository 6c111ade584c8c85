package mysql

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/fluxcd/pkg/runtime/conditions"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/applyset"
	"github.com/example/mysql-operator/controller/children"
	"github.com/example/mysql-operator/controller/dataplane"
	"github.com/example/mysql-operator/controller/outcome"
	"github.com/example/mysql-operator/controller/vocabulary"
)

// Reconciler reconciles MySQL objects into their children.
type Reconciler struct {
	// Client is the manager's client: reads from the cache, writes to the API server.
	Client client.Client
	// APIReader reads from the API server, only to confirm that a password
	// Secret missing from the cache really does not exist.
	APIReader client.Reader
	// Recorder records the events a user reads in `kubectl describe my`.
	Recorder events.EventRecorder
	// AgentImage is the image the database pods copy the agent from: the
	// operator's own.
	AgentImage string
	// MaxConcurrentReconciles is how many MySQLs reconcile at once.
	MaxConcurrentReconciles int
	// ProgressInterval is the least time between two status writes of a
	// MySQL that stays in progress (see statusWriter); zero writes every
	// change at once.
	ProgressInterval time.Duration

	// CheckInterval is how often the servers of an idle MySQL are checked.
	CheckInterval time.Duration
	// FailoverGrace is how long a primary may be unreachable before failover.
	FailoverGrace time.Duration
	// MaxLag is the replication lag above which a replica is not ready.
	MaxLag time.Duration
	// StallAfter is how long a pod may stay unschedulable, unable to pull
	// its image or crash-looping before the MySQL is Stalled.
	StallAfter time.Duration

	// seen spares re-comparing children unchanged since they were last
	// applied or compared; SetupWithManager makes it.
	seen *applyset.Seen
	// status writes statuses; SetupWithManager makes it.
	status *statusWriter
	// dataPlane observes the servers, decides and acts; SetupWithManager
	// makes it.
	dataPlane *dataplane.DataPlane
	// settled remembers the MySQLs whose children step finds nothing to do.
	settled *settledChildren
	// extras remembers the extras applied (extras.go).
	extras *appliedExtras
}

// +kubebuilder:rbac:groups=database.example.com,resources=mysqls,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=database.example.com,resources=mysqls/status,verbs=get;update;patch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups="",resources=configmaps;services,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=apps,resources=statefulsets,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=policy,resources=poddisruptionbudgets,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;patch;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;create;update,namespace=mysql-operator-system

// Reconcile converges one MySQL: it marks it as the ApplySet parent, applies
// the children that differ from the desired state, prunes the ones no longer
// desired, and reports what it saw in status.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (result ctrl.Result, retErr error) {
	obj := &databasev1.MySQL{}
	if err := r.Client.Get(ctx, req.NamespacedName, obj); err != nil {
		if apierrors.IsNotFound(err) {
			r.status.forget(req.NamespacedName)
			r.dataPlane.Forget(req.NamespacedName)
			r.settled.forget(req.NamespacedName)
			r.extras.forget(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !obj.DeletionTimestamp.IsZero() {
		// The garbage collector deletes the children through their owner references.
		return ctrl.Result{}, nil
	}
	if primary, ok := r.status.lastPrimary(req.NamespacedName); ok {
		obj.Status.CurrentPrimary = primary
	}
	obs := &observation{endOfLife: endOfLife(obj, time.Now())}
	defer func() { result, retErr = r.finish(ctx, obj, obs, retErr) }()

	if err := r.reconcileParent(ctx, obj); err != nil {
		return ctrl.Result{}, err
	}
	secrets, err := r.reconcileChildren(ctx, obj, obs)
	if err != nil {
		return ctrl.Result{}, err
	}
	if err := r.observeChildren(ctx, obj, obs); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.observePods(ctx, obj, obs); err != nil {
		return ctrl.Result{}, err
	}
	obs.db, err = r.dataPlane.Reconcile(ctx, obj, obs.pods, secrets)
	obs.recheck = outcome.Soonest(obs.recheck, obs.db.Recheck)
	return ctrl.Result{}, err
}

// finish judges the MySQL's status from the reconcile's outcome, reports a
// new stall, writes the status, and decides when to reconcile again: a
// retried error goes back to the work queue's back-off; otherwise the
// soonest of a held status write, a stall's own retry and a child awaited
// in the cache.
func (r *Reconciler) finish(ctx context.Context, obj *databasev1.MySQL, obs *observation, reconcileErr error) (ctrl.Result, error) {
	want := judgeStatus(obj, obs, reconcileErr)
	stall := outcome.AsStall(reconcileErr)
	if stall != nil {
		reconcileErr = nil
	}
	hold, wrote, err := r.status.write(ctx, obj, want)
	if wrote {
		r.reportWritten(ctx, obj, &want)
	}
	if err != nil || reconcileErr != nil {
		return ctrl.Result{}, errors.Join(reconcileErr, err)
	}
	var after []time.Duration
	after = append(after, hold)
	if stall != nil {
		after = append(after, stall.Retry)
	}
	if obs.awaiting {
		after = append(after, applyset.AwaitCache)
	}
	if obs.db.Acted {
		// Observe the action's outcome and take the next step.
		after = append(after, time.Second)
	}
	return requeue(outcome.Soonest(append(after, obs.recheck)...), outcome.UntilCheck(time.Now(), obj.UID, r.CheckInterval)), nil
}

// requeue is when to reconcile a MySQL again: after the soonest thing it
// waits for (0: nothing), and at the latest at its next periodic check (0:
// none). A periodic check is queued at low priority, so that with many idle
// MySQLs a change a user made (an event, normal priority) goes ahead of it.
func requeue(waiting, check time.Duration) ctrl.Result {
	switch {
	case waiting > 0 && (check <= 0 || waiting < check):
		return ctrl.Result{RequeueAfter: waiting}
	case check <= 0:
		return ctrl.Result{}
	}
	return ctrl.Result{RequeueAfter: check, Priority: ptr.To(handler.LowPriority)}
}

// reportWritten records a Warning event and a log line for what a status
// write made news of: a stall, or a new reason or message of one, and a
// version at its end of life. Events follow the writes, not the
// reconciles: a reconcile that runs before the cache shows the write
// reports nothing again, and a stall retried is not reported again.
func (r *Reconciler) reportWritten(ctx context.Context, was *databasev1.MySQL, now *databasev1.MySQLStatus) {
	after := &databasev1.MySQL{Status: *now}
	if c := conditions.Get(after, databasev1.ConditionStalled); c != nil && c.Status == metav1.ConditionTrue {
		old := conditions.Get(was, databasev1.ConditionStalled)
		if old == nil || old.Status != metav1.ConditionTrue || old.Reason != c.Reason || old.Message != c.Message {
			vocabulary.Event(r.Recorder, was, vocabulary.EventStalled, "%s: %s", c.Reason, c.Message)
			ctrl.LoggerFrom(ctx).Info("stalled", "reason", c.Reason, "message", c.Message)
		}
	}
	if conditions.IsTrue(after, databasev1.ConditionEndOfLife) && !conditions.IsTrue(was, databasev1.ConditionEndOfLife) {
		vocabulary.Event(r.Recorder, was, vocabulary.EventEndOfLife, "%s", conditions.GetMessage(after, databasev1.ConditionEndOfLife))
	}
	if conditions.IsTrue(after, databasev1.ConditionCertificateExpiring) && !conditions.IsTrue(was, databasev1.ConditionCertificateExpiring) {
		vocabulary.Event(r.Recorder, was, vocabulary.EventCertificateExpiring, "%s", conditions.GetMessage(after, databasev1.ConditionCertificateExpiring))
	}
}

// endOfLife says, when the MySQL's version is no longer supported by its
// vendor at now, so in a sentence; else it returns "".
func endOfLife(m *databasev1.MySQL, now time.Time) string {
	eol, ok := databasev1.EndOfLife(m.Spec.Engine, m.Spec.Version)
	if !ok || now.Before(eol) {
		return ""
	}
	engine := m.Spec.Engine
	if engine == "" {
		engine = databasev1.EngineMySQL
	}
	return fmt.Sprintf("%s %s reached its end of life on %s: upgrade to the next version", engine, m.Spec.Version, eol.Format(time.DateOnly))
}

// mysqlOfPod maps a database pod to its MySQL, by the instance label.
func mysqlOfPod(_ context.Context, o client.Object) []reconcile.Request {
	names := podInstance(o)
	if len(names) == 0 {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: names[0]}}}
}

// applier returns the ApplySet applier of the reconciler.
func (r *Reconciler) applier() applyset.Applier {
	return applyset.Applier{Client: r.Client, Reader: r.Client, FieldManager: vocabulary.FieldManager, Seen: r.seen}
}

// SetupWithManager registers the reconciler: it watches MySQLs on spec
// changes, the children it owns (every kind of the childKinds table), and
// the Secrets named by rootPasswordSecretRef, so that creating a missing
// Secret recovers a MySQL.
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager) error {
	r.seen = applyset.NewSeen()
	r.status = newStatusWriter(r.Client, r.ProgressInterval)
	r.dataPlane = dataplane.New(r.Client, r.Recorder, r.FailoverGrace, r.MaxLag)
	r.settled = newSettledChildren()
	r.extras = newAppliedExtras()
	if err := mgr.GetFieldIndexer().IndexField(ctx, &databasev1.MySQL{}, indexSecretRef, secretRefIndex); err != nil {
		return err
	}
	if err := children.IndexPrunable(ctx, mgr.GetFieldIndexer()); err != nil {
		return err
	}
	if err := mgr.GetFieldIndexer().IndexField(ctx, &corev1.Pod{}, indexPodInstance, podInstance); err != nil {
		return err
	}
	b := ctrl.NewControllerManagedBy(mgr).
		For(&databasev1.MySQL{}, builder.WithPredicates(predicate.GenerationChangedPredicate{}))
	// The children's and the pods' events are the outcomes of what the
	// operator did: they go ahead of spec changes (PriorityOutcome).
	for _, o := range children.Objects() {
		b = b.Watches(o, ownedBy(mgr.GetClient()))
	}
	return b.Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.mysqlsForSecret)).
		Watches(&corev1.Pod{}, withPriority{EventHandler: handler.EnqueueRequestsFromMapFunc(mysqlOfPod), priority: PriorityOutcome}).
		WithOptions(controller.Options{MaxConcurrentReconciles: r.MaxConcurrentReconciles}).
		Named("mysql").
		Complete(r)
}
