package mysql

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	ctrl "sigs.k8s.io/controller-runtime"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/controller/children"
)

// +kubebuilder:rbac:groups=monitoring.coreos.com,resources=podmonitors,verbs=create;patch

// applyPodMonitor applies obj's PodMonitor, an extra (extras.go), where
// the Prometheus operator's PodMonitor kind is installed. Where it is not,
// nothing is written, and the kind is looked for again some minutes later
// (a MySQL already settled gets its PodMonitor at its next change, or when
// the manager restarts). A PodMonitor refused is logged, never a reason
// to hold the database back.
func (r *Reconciler) applyPodMonitor(ctx context.Context, obj *databasev1.MySQL) error {
	pm := children.PodMonitor(obj)
	now := time.Now()
	if r.extras.absentKind(pm.GetKind(), now) {
		return nil
	}
	err := r.applyExtra(ctx, obj, pm)
	switch {
	case meta.IsNoMatchError(err) || apierrors.IsNotFound(err):
		r.extras.markAbsent(pm.GetKind(), now)
	case apierrors.IsInvalid(err) || apierrors.IsForbidden(err) || apierrors.IsBadRequest(err):
		ctrl.LoggerFrom(ctx).Error(err, "PodMonitor refused", "podMonitor", pm.GetName())
	case err != nil:
		return fmt.Errorf("apply PodMonitor %s: %w", pm.GetName(), err)
	}
	return nil
}
