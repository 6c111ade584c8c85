package controller

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/example/mysql-operator/applyset"
)

// CacheOptions returns the informer cache options of the manager: children
// are cached only when they carry the operator's managed-by label, and every
// object keeps only the operator's own managedFields entry. Secrets are
// cached in every namespace, so that a rootPasswordSecretRef is watched, but
// only the operator's own Secrets keep their values: other Secrets keep
// their keys with empty values.
func CacheOptions() cache.Options {
	owned := cache.ByObject{Label: labels.SelectorFromSet(labels.Set{LabelManagedBy: FieldManager})}
	stripFields := applyset.StripForeignManagedFields(FieldManager)
	return cache.Options{
		DefaultTransform: stripFields,
		ByObject: map[client.Object]cache.ByObject{
			&corev1.ConfigMap{}:             owned,
			&corev1.Service{}:               owned,
			&appsv1.StatefulSet{}:           owned,
			&policyv1.PodDisruptionBudget{}: owned,
			&corev1.Secret{}: {Transform: func(in any) (any, error) {
				if s, ok := in.(*corev1.Secret); ok && s.Labels[LabelManagedBy] != FieldManager {
					for k := range s.Data {
						s.Data[k] = nil
					}
					s.StringData = nil
				}
				return stripFields(in)
			}},
		},
	}
}
