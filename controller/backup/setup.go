package backup

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/controller/vocabulary"
)

// SetupWithManager registers the MySQLBackup reconciler.
func (r *Reconciler) SetupWithManager(_ context.Context, mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("mysqlbackup").
		For(&databasev1.MySQLBackup{}).
		Owns(&corev1.Pod{}).
		Complete(r)
}

// SetupWithManager registers the schedule: it runs when a MySQL's spec
// changes, when one of its backups changes (retention follows a backup
// that completed), and at the schedule's times.
func (s *Scheduler) SetupWithManager(_ context.Context, mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("backupschedule").
		For(&databasev1.MySQL{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&databasev1.MySQLBackup{}, handler.EnqueueRequestsFromMapFunc(backupOf)).
		Complete(s)
}

// backupOf maps a MySQLBackup to its MySQL.
func backupOf(_ context.Context, o client.Object) []reconcile.Request {
	name := o.GetLabels()[vocabulary.LabelBackupOf]
	if name == "" {
		if b, ok := o.(*databasev1.MySQLBackup); ok {
			name = b.Spec.MySQLRef.Name
		}
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: name}}}
}
