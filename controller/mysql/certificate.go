package mysql

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/controller/children"
	"github.com/example/mysql-operator/controller/outcome"
	"github.com/example/mysql-operator/controller/vocabulary"
)

// +kubebuilder:rbac:groups=cert-manager.io,resources=certificates,verbs=create;patch

// appliedCertificates remembers the hash of the Certificate this manager
// last applied for each MySQL, so that an unchanged one is not sent again:
// the operator neither caches nor watches cert-manager's objects, which
// may not even be installed. A new manager applies each once.
type appliedCertificates struct {
	mu sync.Mutex
	m  map[types.NamespacedName][sha256.Size]byte
}

// newAppliedCertificates returns an empty record.
func newAppliedCertificates() *appliedCertificates {
	return &appliedCertificates{m: map[types.NamespacedName][sha256.Size]byte{}}
}

// forget drops what was applied for key.
func (a *appliedCertificates) forget(key types.NamespacedName) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.m, key)
}

// applyCertificate applies obj's Certificate (tls.certManager) unless this
// manager applied the same one last. Without cert-manager's CRD, or with
// the Certificate refused, the MySQL stalls saying so.
func (r *Reconciler) applyCertificate(ctx context.Context, obj *databasev1.MySQL) error {
	cert := children.Certificate(obj)
	if cert == nil {
		return nil
	}
	raw, err := json.Marshal(cert.Object)
	if err != nil {
		return fmt.Errorf("encode Certificate %s: %w", cert.GetName(), err)
	}
	sum, key := sha256.Sum256(raw), client.ObjectKeyFromObject(obj)
	r.certificates.mu.Lock()
	same := r.certificates.m[key] == sum
	r.certificates.mu.Unlock()
	if same {
		return nil
	}
	err = r.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(cert), client.FieldOwner(vocabulary.FieldManager), client.ForceOwnership)
	switch {
	case meta.IsNoMatchError(err) || apierrors.IsNotFound(err):
		return outcome.Stalled(vocabulary.ReasonApplyRejected, "tls.certManager: cert-manager is not installed: the API server serves no Certificate of cert-manager.io/v1")
	case apierrors.IsInvalid(err) || apierrors.IsForbidden(err) || apierrors.IsBadRequest(err):
		return outcome.Stalled(vocabulary.ReasonApplyRejected, "tls.certManager: Certificate %s: %v", cert.GetName(), err)
	case err != nil:
		return fmt.Errorf("apply Certificate %s: %w", cert.GetName(), err)
	}
	r.certificates.mu.Lock()
	r.certificates.m[key] = sum
	r.certificates.mu.Unlock()
	return nil
}
