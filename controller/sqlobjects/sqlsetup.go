package sqlobjects

import (
	"context"

	"github.com/fluxcd/pkg/runtime/conditions"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/dbop"
)

// Field indexes of the SQL objects, by which the objects that refer to a
// MySQL, a Secret or an account are found in the cache.
const (
	// indexMySQLRef indexes databases, users and grants by spec.mysqlRef.name.
	indexMySQLRef = ".spec.mysqlRef.name"
	// indexPasswordSecret indexes users by spec.passwordSecretRef.name.
	indexPasswordSecret = ".spec.passwordSecretRef.name"
	// indexAccount indexes grants by their account: "<mysql>/<user>@<host>".
	indexAccount = ".spec.account"
)

// accountsMadeBuffer is how many accounts made may wait for the grants'
// controller to take them.
const accountsMadeBuffer = 64

// accountKey is the indexAccount key of an account of a MySQL.
func accountKey(mysql, user, host string) string { return mysql + "/" + user + "@" + host }

// SetupWithManager registers one controller per kind. Each watches its
// objects' spec changes and deletions, and the MySQLs they name (only when
// a primary becomes ready, changes or goes away); users also watch their
// password Secrets, which need no label, and grants their accounts'
// MySQLUsers becoming ready and their accounts being created.
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager) error {
	r.pool = dbop.NewPool(dbop.DefaultOptions())
	r.accountsMade = make(chan event.TypedGenericEvent[*databasev1.MySQLUser], accountsMadeBuffer)
	if r.DriftInterval <= 0 {
		r.DriftInterval = DefaultDriftInterval
	}
	idx := mgr.GetFieldIndexer()
	if err := idx.IndexField(ctx, &databasev1.MySQLUser{}, indexPasswordSecret, func(o client.Object) []string {
		return []string{o.(*databasev1.MySQLUser).Spec.PasswordSecretRef.Name}
	}); err != nil {
		return err
	}
	if err := idx.IndexField(ctx, &databasev1.MySQLGrant{}, indexAccount, func(o client.Object) []string {
		g := o.(*databasev1.MySQLGrant)
		return []string{accountKey(g.Spec.MySQLRef.Name, g.Spec.User, g.GrantHost())}
	}); err != nil {
		return err
	}
	if err := setupSQLKind(ctx, mgr, r, databaseKind{}, func() client.ObjectList { return &databasev1.MySQLDatabaseList{} }); err != nil {
		return err
	}
	users := handler.EnqueueRequestsFromMapFunc(referrers(r.Client, func() client.ObjectList { return &databasev1.MySQLUserList{} }, indexPasswordSecret))
	if err := setupSQLKind(ctx, mgr, r, userKind{}, func() client.ObjectList { return &databasev1.MySQLUserList{} },
		func(b *builder.Builder) *builder.Builder { return b.Watches(&corev1.Secret{}, users) }); err != nil {
		return err
	}
	grants := handler.EnqueueRequestsFromMapFunc(r.grantsOfUser)
	made := handler.TypedEnqueueRequestsFromMapFunc(func(ctx context.Context, u *databasev1.MySQLUser) []reconcile.Request {
		return r.grantsOfUser(ctx, u)
	})
	return setupSQLKind(ctx, mgr, r, grantKind{}, func() client.ObjectList { return &databasev1.MySQLGrantList{} },
		func(b *builder.Builder) *builder.Builder {
			return b.Watches(&databasev1.MySQLUser{}, grants, builder.WithPredicates(becameReady)).
				WatchesRawSource(source.Channel(r.accountsMade, made))
		})
}

// setupSQLKind indexes the kind by mysqlRef and registers its controller.
func setupSQLKind[T sqlObject](ctx context.Context, mgr ctrl.Manager, r *Reconciler, k sqlKind[T],
	newList func() client.ObjectList, watches ...func(*builder.Builder) *builder.Builder) error {
	if err := mgr.GetFieldIndexer().IndexField(ctx, k.newObject(), indexMySQLRef, func(o client.Object) []string {
		return []string{k.mysqlRef(o.(T))}
	}); err != nil {
		return err
	}
	b := ctrl.NewControllerManagedBy(mgr).
		For(k.newObject(), builder.WithPredicates(predicate.Or[client.Object](predicate.GenerationChangedPredicate{}, deletionStarted))).
		Watches(&databasev1.MySQL{}, handler.EnqueueRequestsFromMapFunc(referrers(r.Client, newList, indexMySQLRef)),
			builder.WithPredicates(primaryChanged))
	for _, w := range watches {
		b = w(b)
	}
	return b.WithOptions(controller.Options{MaxConcurrentReconciles: r.MaxConcurrentReconciles}).
		Named(k.name()).
		Complete(&sqlReconciler[T]{Reconciler: r, kind: k})
}

// referrers maps an object to the objects of newList's kind, in its
// namespace, whose index names it.
func referrers(c client.Reader, newList func() client.ObjectList, index string) handler.MapFunc {
	return func(ctx context.Context, o client.Object) []reconcile.Request {
		return listRequests(ctx, c, newList(), client.InNamespace(o.GetNamespace()), client.MatchingFields{index: o.GetName()})
	}
}

// grantsOfUser maps a MySQLUser to the grants of its account.
func (r *Reconciler) grantsOfUser(ctx context.Context, o client.Object) []reconcile.Request {
	u := o.(*databasev1.MySQLUser)
	key := accountKey(u.Spec.MySQLRef.Name, u.UserName(), u.UserHost())
	return listRequests(ctx, r.Client, &databasev1.MySQLGrantList{}, client.InNamespace(u.Namespace), client.MatchingFields{indexAccount: key})
}

// listRequests lists objects and returns a request for each.
func listRequests(ctx context.Context, c client.Reader, list client.ObjectList, opts ...client.ListOption) []reconcile.Request {
	if err := c.List(ctx, list, opts...); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "list the objects to reconcile")
		return nil
	}
	items, err := apimeta.ExtractList(list)
	if err != nil {
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(items))
	for _, item := range items {
		if o, ok := item.(client.Object); ok {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(o)})
		}
	}
	return reqs
}

// deletionStarted lets through the update that marks an object deleted:
// the first reconcile of its cleanup.
var deletionStarted = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		return e.ObjectOld.GetDeletionTimestamp().IsZero() && !e.ObjectNew.GetDeletionTimestamp().IsZero()
	},
	CreateFunc:  func(event.CreateEvent) bool { return false },
	DeleteFunc:  func(event.DeleteEvent) bool { return false },
	GenericFunc: func(event.GenericEvent) bool { return false },
}

// becameReady lets through the MySQLUser updates whose Ready condition
// turned True: their grants can be given now.
var becameReady = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		oldU, okOld := e.ObjectOld.(*databasev1.MySQLUser)
		newU, okNew := e.ObjectNew.(*databasev1.MySQLUser)
		return okOld && okNew && !conditions.IsReady(oldU) && conditions.IsReady(newU)
	},
	DeleteFunc: func(event.DeleteEvent) bool { return false },
}
