package mysql

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/controller/children"
	"github.com/example/mysql-operator/controller/outcome"
	"github.com/example/mysql-operator/controller/vocabulary"
)

// +kubebuilder:rbac:groups=cert-manager.io,resources=certificates,verbs=create;patch

// applyCertificate applies obj's Certificate (tls.certManager), an extra
// (extras.go). Without cert-manager's CRD, or with
// the Certificate refused, the MySQL stalls saying so.
func (r *Reconciler) applyCertificate(ctx context.Context, obj *databasev1.MySQL) error {
	cert := children.Certificate(obj)
	if cert == nil {
		return nil
	}
	err := r.applyExtra(ctx, obj, cert)
	switch {
	case meta.IsNoMatchError(err) || apierrors.IsNotFound(err):
		return outcome.Stalled(vocabulary.ReasonApplyRejected, "tls.certManager: cert-manager is not installed: the API server serves no Certificate of cert-manager.io/v1")
	case apierrors.IsInvalid(err) || apierrors.IsForbidden(err) || apierrors.IsBadRequest(err):
		return outcome.Stalled(vocabulary.ReasonApplyRejected, "tls.certManager: Certificate %s: %v", cert.GetName(), err)
	case err != nil:
		return fmt.Errorf("apply Certificate %s: %w", cert.GetName(), err)
	}
	return nil
}
