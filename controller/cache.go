package controller

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/example/mysql-operator/applyset"
)

// stripFields drops every managedFields entry but the operator's own.
var stripFields = applyset.StripForeignManagedFields(FieldManager)

// CacheOptions returns the informer cache options of the manager, from the
// table of child kinds: children are cached only when they carry the
// operator's managed-by label, and every object keeps only the operator's
// own managedFields entry. Secrets are cached in every namespace, so that
// a rootPasswordSecretRef is watched, but only the operator's own Secrets
// keep their values: other Secrets keep their keys with empty values.
func CacheOptions() cache.Options {
	owned := cache.ByObject{Label: labels.SelectorFromSet(labels.Set{LabelManagedBy: FieldManager})}
	byObject := make(map[client.Object]cache.ByObject, len(childKinds))
	for _, k := range childKinds {
		if k.cache != nil {
			byObject[k.object] = *k.cache
			continue
		}
		byObject[k.object] = owned
	}
	// The database pods: not children (the StatefulSet makes them), but
	// the operator watches them and labels their roles.
	byObject[&corev1.Pod{}] = owned
	return cache.Options{DefaultTransform: stripFields, ByObject: byObject}
}

// stripForeignSecrets is the cache transform of Secrets: a Secret the
// operator does not manage keeps its keys, with empty values.
func stripForeignSecrets(in any) (any, error) {
	if s, ok := in.(*corev1.Secret); ok && s.Labels[LabelManagedBy] != FieldManager {
		for k := range s.Data {
			s.Data[k] = nil
		}
		s.StringData = nil
	}
	return stripFields(in)
}
