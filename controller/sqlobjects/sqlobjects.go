package sqlobjects

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/controller/outcome"
	"github.com/example/mysql-operator/controller/vocabulary"
	"github.com/example/mysql-operator/dbop"
)

// DefaultDriftInterval is how often a database, user or grant is compared
// with the server when nothing else wakes it.
const DefaultDriftInterval = 5 * time.Minute

// sqlTimeout bounds the statements of one reconcile of a database, user or grant.
const sqlTimeout = 30 * time.Second

// Reconciler reconciles the SQL objects, MySQLDatabase, MySQLUser
// and MySQLGrant, on the current primary of the MySQL each names. Each
// reconcile compares the spec with what the server shows (the database's
// character set, the account's attributes, SHOW GRANTS) and changes only
// what differs; it runs on every change of the object, of its MySQL's
// primary, of a user's password Secret, and every DriftInterval, so that a
// manual REVOKE or DROP USER is undone.
type Reconciler struct {
	// Client is the manager's client: reads from the cache, writes to the API server.
	Client client.Client
	// APIReader reads from the API server: a user's password, which the
	// cache does not keep (it keeps only the keys of Secrets the operator
	// does not own).
	APIReader client.Reader
	// Recorder records the events a user reads in `kubectl describe`.
	Recorder events.EventRecorder
	// MaxConcurrentReconciles is how many objects of each kind reconcile at once.
	MaxConcurrentReconciles int
	// DriftInterval is how often an object is compared with the server
	// when nothing else happens.
	DriftInterval time.Duration

	// pool holds the connections to the primaries, and which one each
	// MySQL uses; SetupWithManager makes it.
	pool *dbop.Pool
	// accountsMade carries the MySQLUsers whose account a reconcile has
	// just created, to the grants' controller: a grant waiting for its
	// account is given at once, not at its next retry or drift check.
	accountsMade chan event.TypedGenericEvent[*databasev1.MySQLUser]
}

// sqlObject is a MySQLDatabase, MySQLUser or MySQLGrant.
type sqlObject interface {
	conditions.Setter
}

// sqlKind is what the shared reconciler knows of one kind of SQL object.
type sqlKind[T sqlObject] interface {
	// name names the controller.
	name() string
	// newObject returns an empty object of the kind.
	newObject() T
	// mysqlRef returns the name of the MySQL obj names.
	mysqlRef(obj T) string
	// status returns obj's kstatus fields.
	status(obj T) *databasev1.SQLObjectStatus
	// record sets on obj the status fields of its own kind from obs.
	record(obj T, obs *sqlObservation)
	// needsCleanup says whether deleting obj must change the server; such
	// an object carries the finalizer while its MySQL is there.
	needsCleanup(obj T) bool
	// apply makes the primary match obj, recording in obs what status says.
	apply(ctx context.Context, p *sqlPass, obj T, obs *sqlObservation) error
	// cleanUp undoes obj on the primary, for its deletion.
	cleanUp(ctx context.Context, p *sqlPass, obj T) error
}

// sqlReconciler is the control loop of one kind of SQL object.
type sqlReconciler[T sqlObject] struct {
	*Reconciler
	kind sqlKind[T]
}

// +kubebuilder:rbac:groups=database.example.com,resources=mysqldatabases;mysqlusers;mysqlgrants,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=database.example.com,resources=mysqldatabases/status;mysqlusers/status;mysqlgrants/status,verbs=get;patch
// +kubebuilder:rbac:groups=database.example.com,resources=mysqls,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=secrets;pods,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile converges one object: once its MySQL has a writable primary,
// it holds the finalizer if deleting the object must change the server,
// applies the spec where the server differs, and reports in status. A
// deleted object is cleaned up on the primary, or let go at once when its
// MySQL is gone or being deleted.
func (r *sqlReconciler[T]) Reconcile(ctx context.Context, req ctrl.Request) (result ctrl.Result, retErr error) {
	obj := r.kind.newObject()
	if err := r.Client.Get(ctx, req.NamespacedName, obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !obj.GetDeletionTimestamp().IsZero() {
		return r.delete(ctx, obj)
	}
	obs := &sqlObservation{}
	defer func() { result, retErr = r.finish(ctx, obj, obs, retErr) }()

	t, err := r.target(ctx, obj.GetNamespace(), r.kind.mysqlRef(obj))
	if err != nil {
		return ctrl.Result{}, err
	}
	if err := r.holdFinalizer(ctx, obj, r.kind.needsCleanup(obj)); err != nil {
		return ctrl.Result{}, err
	}
	sctx, cancel := context.WithTimeout(ctx, sqlTimeout)
	defer cancel()
	return ctrl.Result{}, r.kind.apply(sctx, r.pass(obj, t), obj, obs)
}

// delete cleans up a deleted object on its MySQL's primary and releases
// the finalizer. When the MySQL is gone or being deleted there is nothing
// to clean up, and the finalizer goes at once: deleting a whole
// application never hangs. A MySQL that is there but not ready is waited for.
func (r *sqlReconciler[T]) delete(ctx context.Context, obj T) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(obj, vocabulary.FinalizerSQLCleanup) || !r.kind.needsCleanup(obj) {
		return ctrl.Result{}, r.holdFinalizer(ctx, obj, false)
	}
	ref := r.kind.mysqlRef(obj)
	m, err := r.mysqlOf(ctx, obj.GetNamespace(), ref)
	if err != nil {
		return ctrl.Result{}, err
	}
	if m == nil || !m.DeletionTimestamp.IsZero() {
		r.eventf(obj, vocabulary.EventCleanupSkipped, vocabulary.ActionCleanUp, "MySQL %s is gone or being deleted: nothing to clean up", ref)
		return ctrl.Result{}, r.holdFinalizer(ctx, obj, false)
	}
	t, err := r.target(ctx, obj.GetNamespace(), ref)
	if w := asWait(err); w != nil {
		ctrl.LoggerFrom(ctx).Info("cleanup waits", "reason", w.reason, "message", w.message)
		return ctrl.Result{RequeueAfter: w.retry}, nil
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	sctx, cancel := context.WithTimeout(ctx, sqlTimeout)
	defer cancel()
	if err := r.kind.cleanUp(sctx, r.pass(obj, t), obj); err != nil {
		return ctrl.Result{}, fmt.Errorf("clean up on %s: %w", t.pod, err)
	}
	return ctrl.Result{}, r.holdFinalizer(ctx, obj, false)
}

// finish judges the object's status from the reconcile's outcome, reports
// a new stall, writes the status when it changed, and decides when to
// reconcile again: a retried error goes back to the work queue's back-off,
// a wait comes back after its retry, a stall when something changes, and
// an object in order after DriftInterval.
func (r *sqlReconciler[T]) finish(ctx context.Context, obj T, obs *sqlObservation, reconcileErr error) (ctrl.Result, error) {
	want := obj.DeepCopyObject().(T)
	*r.kind.status(want) = judgeSQLStatus(obj, r.kind.status, obs, reconcileErr)
	r.kind.record(want, obs)
	stall, wait := outcome.AsStall(reconcileErr), asWait(reconcileErr)
	if stall != nil {
		r.reportObjectStall(ctx, obj, stall)
	}
	if err := r.writeStatus(ctx, obj, want); err != nil {
		return ctrl.Result{}, errors.Join(reconcileErr, err)
	}
	switch {
	case stall != nil:
		return ctrl.Result{RequeueAfter: stall.Retry}, nil
	case wait != nil:
		return ctrl.Result{RequeueAfter: wait.retry}, nil
	case reconcileErr != nil:
		return ctrl.Result{}, reconcileErr
	}
	return ctrl.Result{RequeueAfter: outcome.UntilCheck(time.Now(), obj.GetUID(), r.DriftInterval)}, nil
}

// writeStatus patches obj's status to want's, in one merge patch, unless
// they are equal.
func (r *sqlReconciler[T]) writeStatus(ctx context.Context, obj, want T) error {
	if equality.Semantic.DeepEqual(obj, want) {
		return nil
	}
	err := r.Client.Status().Patch(ctx, want, client.MergeFrom(obj), client.FieldOwner(vocabulary.FieldManager))
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("patch %s status: %w", r.kind.name(), err)
	}
	return nil
}

// holdFinalizer adds or removes the finalizer, in a patch that fails on a
// concurrent change rather than drop another finalizer.
func (r *sqlReconciler[T]) holdFinalizer(ctx context.Context, obj T, hold bool) error {
	if controllerutil.ContainsFinalizer(obj, vocabulary.FinalizerSQLCleanup) == hold {
		return nil
	}
	before := obj.DeepCopyObject().(T)
	if hold {
		controllerutil.AddFinalizer(obj, vocabulary.FinalizerSQLCleanup)
	} else {
		controllerutil.RemoveFinalizer(obj, vocabulary.FinalizerSQLCleanup)
	}
	patch := client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})
	if err := r.Client.Patch(ctx, obj, patch, client.FieldOwner(vocabulary.FieldManager)); err != nil {
		return client.IgnoreNotFound(err)
	}
	return nil
}

// reportObjectStall records a Warning event and a log line for a stall,
// unless the object already shows the same stall.
func (r *sqlReconciler[T]) reportObjectStall(ctx context.Context, obj T, stall *outcome.Stall) {
	c := conditions.Get(obj, databasev1.ConditionStalled)
	if c != nil && c.Status == metav1.ConditionTrue && c.Reason == stall.Reason && c.Message == stall.Message {
		return
	}
	r.eventf(obj, vocabulary.EventStalled, vocabulary.ActionReconcile, "%s: %s", stall.Reason, stall.Message)
	ctrl.LoggerFrom(ctx).Info("stalled", "reason", stall.Reason, "message", stall.Message)
}

// pass makes the sqlPass of one reconcile of obj against t.
func (r *sqlReconciler[T]) pass(obj T, t *sqlTarget) *sqlPass {
	st := r.kind.status(obj)
	return &sqlPass{r: r.Reconciler, obj: obj, target: t, db: t.db,
		applied: st.ObservedGeneration == obj.GetGeneration() && conditions.IsReady(obj)}
}

// sqlPass is one reconcile of one object against a primary: what the
// kinds' apply and cleanUp need besides the object itself.
type sqlPass struct {
	r      *Reconciler
	obj    client.Object
	target *sqlTarget
	db     *dbop.Instance
	// applied says that this generation was applied before: a difference
	// found now is drift.
	applied bool
}

// changed records an event saying what the reconcile changed on the
// primary with action (a SQL verb: events of one reason and action about
// one object merge into a series, so each verb keeps its own):
// DriftCorrected when the spec had been applied before, else Changed.
func (p *sqlPass) changed(action, format string, args ...any) {
	reason := vocabulary.EventSQLChanged
	if p.applied {
		reason = vocabulary.EventDriftCorrected
	}
	p.r.eventf(p.obj, reason, action, "%s on %s", fmt.Sprintf(format, args...), p.target.pod)
}

// accountMade wakes the grants of u's account, which its reconcile has
// just created (again, after a DROP USER): neither the account's Ready
// condition nor anything else the grants watch changed. It never blocks:
// when the channel is full, the grants' own retry gives them.
func (r *Reconciler) accountMade(u *databasev1.MySQLUser) {
	select {
	case r.accountsMade <- event.TypedGenericEvent[*databasev1.MySQLUser]{Object: u.DeepCopy()}:
	default:
	}
}

// eventf records an event of one of the SQL objects' reasons on obj:
// Warning for a stall or drift, else Normal.
func (r *Reconciler) eventf(obj client.Object, reason, action, format string, args ...any) {
	eventType := corev1.EventTypeNormal
	if reason == vocabulary.EventStalled || reason == vocabulary.EventDriftCorrected {
		eventType = corev1.EventTypeWarning
	}
	r.Recorder.Eventf(obj, nil, eventType, reason, action, format, args...)
}
