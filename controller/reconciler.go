package controller

import (
	"context"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/applyset"
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
	// MaxConcurrentReconciles is how many MySQLs reconcile at once.
	MaxConcurrentReconciles int
	// ProgressInterval is the least time between two status writes of a
	// MySQL that stays in progress (see progressLimiter); zero writes every
	// change at once.
	ProgressInterval time.Duration

	// seen spares re-comparing children unchanged since they were last
	// applied or compared; SetupWithManager makes it.
	seen *applyset.Seen
	// progress spaces the status writes of MySQLs in progress; SetupWithManager makes it.
	progress *progressLimiter
	// written spares writing a status again on a cache that lags the
	// manager's own last write; SetupWithManager makes it.
	written *writtenStatus
}

// +kubebuilder:rbac:groups=database.example.com,resources=mysqls,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=database.example.com,resources=mysqls/status,verbs=get;update;patch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups="",resources=configmaps;services,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=apps,resources=statefulsets,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=policy,resources=poddisruptionbudgets,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;create;update,namespace=mysql-operator-system

// Reconcile converges one MySQL: it marks it as the ApplySet parent, applies
// the children that differ from the desired state, prunes the ones no longer
// desired, and reports what it saw in status.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (result ctrl.Result, retErr error) {
	obj := &databasev1.MySQL{}
	if err := r.Client.Get(ctx, req.NamespacedName, obj); err != nil {
		if apierrors.IsNotFound(err) {
			r.progress.forget(req.NamespacedName)
			r.written.forget(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !obj.DeletionTimestamp.IsZero() {
		// The garbage collector deletes the children through their owner references.
		return ctrl.Result{}, nil
	}
	before := obj.DeepCopy()
	obs := &observation{}
	defer func() {
		retry := retryAfter(retErr)
		var hold time.Duration
		hold, retErr = r.patchStatus(ctx, before, obj, obs, retErr)
		for _, after := range []time.Duration{retry, awaitingAfter(obs)} {
			if after > 0 && (hold == 0 || after < hold) {
				hold = after
			}
		}
		if retErr == nil && hold > 0 {
			result.RequeueAfter = hold
		}
	}()

	if err := r.reconcileParent(ctx, obj); err != nil {
		return ctrl.Result{}, err
	}
	members, err := r.desiredChildren(ctx, obj)
	if err != nil {
		return ctrl.Result{}, err
	}
	if err := r.expandVolumes(ctx, obj); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.applyChildren(ctx, obj, members, obs); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.prune(ctx, obj, members); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.observeStatefulSet(ctx, obj, obs); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, nil
}

// applier returns the ApplySet applier of the reconciler.
func (r *Reconciler) applier() applyset.Applier {
	return applyset.Applier{Client: r.Client, Reader: r.Client, FieldManager: FieldManager, Seen: r.seen}
}

// SetupWithManager registers the reconciler: it watches MySQLs on spec
// changes, the children it owns, and the Secrets named by
// rootPasswordSecretRef, so that creating a missing Secret recovers a MySQL.
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager) error {
	r.seen = applyset.NewSeen()
	r.progress = newProgressLimiter(r.ProgressInterval)
	r.written = newWrittenStatus()
	if err := mgr.GetFieldIndexer().IndexField(ctx, &databasev1.MySQL{}, indexSecretRef, secretRefIndex); err != nil {
		return err
	}
	if err := indexPrunable(ctx, mgr.GetFieldIndexer()); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&databasev1.MySQL{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Owns(&corev1.Secret{}).
		Owns(&corev1.ConfigMap{}).
		Owns(&corev1.Service{}).
		Owns(&appsv1.StatefulSet{}).
		Owns(&policyv1.PodDisruptionBudget{}).
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.mysqlsForSecret)).
		WithOptions(controller.Options{MaxConcurrentReconciles: r.MaxConcurrentReconciles}).
		Named("mysql").
		Complete(r)
}

// The metrics endpoint authenticates and authorizes its clients.
// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create
