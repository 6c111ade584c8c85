package mysql

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/controller/children"
	"github.com/example/mysql-operator/controller/outcome"
	"github.com/example/mysql-operator/controller/vocabulary"
)

// The root password: generated once into <name>-root, or read from the
// Secret a MySQL names, which is watched so that creating it recovers a
// stalled MySQL.

// rootSecret returns the apply configuration of the generated root password
// Secret, or nil when the MySQL names its own Secret and never had a
// generated one.
func (r *Reconciler) rootSecret(ctx context.Context, obj *databasev1.MySQL) (*corev1ac.SecretApplyConfiguration, error) {
	if ref := obj.Spec.RootPasswordSecretRef; ref != nil {
		if err := r.checkSecretRef(ctx, obj); err != nil {
			return nil, err
		}
	}
	data, err := r.generatedSecret(ctx, obj, children.RootSecretName(obj), obj.Spec.RootPasswordSecretRef == nil, children.RootPasswordKey)
	if data == nil || err != nil {
		return nil, err
	}
	return children.RootSecret(obj, data[children.RootPasswordKey]), nil
}

// operatorSecret returns the apply configuration of the Secret of the
// operator's own database accounts' passwords.
func (r *Reconciler) operatorSecret(ctx context.Context, obj *databasev1.MySQL) (*corev1ac.SecretApplyConfiguration, map[string][]byte, error) {
	data, err := r.generatedSecret(ctx, obj, children.OperatorSecretName(obj), true, children.AdminPasswordKey, children.ReplPasswordKey, children.AgentPasswordKey)
	if err != nil {
		return nil, nil, err
	}
	return children.OperatorSecret(obj, data), data, nil
}

// generatedSecret returns the data of a Secret of generated passwords: the
// stored one, or, when generate is set and the Secret is absent from both
// the cache and the API server, new passwords for keys. A cold or stale
// cache never regenerates a password; once stored it is re-applied
// unchanged for ever. A stored Secret missing a key stalls the MySQL: the
// servers hold the old password, which only its owner can restore. It
// returns nil data when the Secret is absent and generate is not set.
func (r *Reconciler) generatedSecret(ctx context.Context, obj *databasev1.MySQL, name string, generate bool, keys ...string) (map[string][]byte, error) {
	stored, err := r.storedSecret(ctx, obj, name)
	switch {
	case err != nil:
		return nil, err
	case stored != nil:
		for _, k := range keys {
			if _, ok := stored.Data[k]; !ok {
				return nil, outcome.Stalled(vocabulary.ReasonSecretInvalid, "Secret %s has no key %q: restore it, the operator never regenerates a password", name, k)
			}
		}
		return stored.Data, nil
	case !generate:
		return nil, nil
	}
	data := make(map[string][]byte, len(keys))
	for _, k := range keys {
		if data[k], err = generatePassword(); err != nil {
			return nil, err
		}
	}
	return data, nil
}

// storedSecret returns the operator's Secret name of obj's namespace, nil
// when it does not exist: from the cache, or, when the cache does not hold
// it (a cold or stale cache), from the API server, so that nothing
// generated once is generated again.
func (r *Reconciler) storedSecret(ctx context.Context, obj *databasev1.MySQL, name string) (*corev1.Secret, error) {
	key := types.NamespacedName{Namespace: obj.Namespace, Name: name}
	existing := &corev1.Secret{}
	err := r.Client.Get(ctx, key, existing)
	if apierrors.IsNotFound(err) {
		err = r.APIReader.Get(ctx, key, existing)
	}
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("get Secret %s: %w", name, err)
	}
	return existing, nil
}

// generatePassword returns 32 random characters from crypto/rand.
func generatePassword() ([]byte, error) {
	raw := make([]byte, 24)
	if _, err := rand.Read(raw); err != nil {
		return nil, fmt.Errorf("generate a password: %w", err)
	}
	return []byte(base64.RawURLEncoding.EncodeToString(raw)), nil
}

// checkSecretRef stalls the MySQL when rootPasswordSecretRef names a Secret
// or key that does not exist. The cache holds every Secret's keys but only
// the operator's own Secrets' values.
func (r *Reconciler) checkSecretRef(ctx context.Context, obj *databasev1.MySQL) error {
	name, key := children.PasswordRef(obj)
	s := &corev1.Secret{}
	switch err := r.Client.Get(ctx, types.NamespacedName{Namespace: obj.Namespace, Name: name}, s); {
	case apierrors.IsNotFound(err):
		return outcome.Stalled(vocabulary.ReasonSecretNotFound, "rootPasswordSecretRef: Secret %s not found in namespace %s", name, obj.Namespace)
	case err != nil:
		return fmt.Errorf("get Secret %s: %w", name, err)
	}
	if _, ok := s.Data[key]; !ok {
		return outcome.Stalled(vocabulary.ReasonSecretInvalid, "rootPasswordSecretRef: Secret %s has no key %q", name, key)
	}
	return nil
}

// indexSecretRef indexes MySQLs by the Secrets of others they name: their
// rootPasswordSecretRef's and their tls.secretName.
const indexSecretRef = ".spec.secretRefs"

func secretRefIndex(o client.Object) []string {
	m := o.(*databasev1.MySQL)
	var names []string
	if ref := m.Spec.RootPasswordSecretRef; ref != nil {
		names = append(names, ref.Name)
	}
	if name := children.TLSSourceSecret(m); name != "" {
		names = append(names, name)
	}
	return names
}

// mysqlsForSecret maps a Secret to the MySQLs that name it.
func (r *Reconciler) mysqlsForSecret(ctx context.Context, s client.Object) []reconcile.Request {
	list := &databasev1.MySQLList{}
	if err := r.Client.List(ctx, list, client.InNamespace(s.GetNamespace()), client.MatchingFields{indexSecretRef: s.GetName()}); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "list MySQLs for Secret", "secret", s.GetName())
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(list.Items))
	for _, m := range list.Items {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&m)})
	}
	return reqs
}
