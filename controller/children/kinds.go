package children

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/example/mysql-operator/applyset"
	"github.com/example/mysql-operator/controller/vocabulary"
)

// childKind is one kind of child the operator makes. The table childKinds
// drives everything that depends on the kinds: the controller's Owns
// watches, the cache's ByObject, the prune indexes and the ApplySet
// parent's contains-group-kinds. Adding a kind of child is one row.
type childKind struct {
	// object is an empty object of the kind.
	object client.Object
	// list makes an empty list of the kind.
	list func() client.ObjectList
	// pruned says whether members no longer desired are deleted.
	pruned bool
	// cache is how the manager's cache keeps objects of the kind; nil keeps
	// only the operator's own (the managed-by label), transformed by
	// transform.
	cache *cache.ByObject
	// transform is the cache transform of the operator's own objects of
	// the kind: an applyset.Summarize of the fields the operator owns.
	transform func(any) (any, error)
}

// childKinds are the kinds of a MySQL's children. Secrets are never pruned:
// a generated root password is kept as long as its MySQL. Every Secret is
// cached, so that a rootPasswordSecretRef is watched, but only the
// operator's own keep their values.
var childKinds = []childKind{
	{object: &corev1.Secret{}, list: func() client.ObjectList { return &corev1.SecretList{} },
		cache: &cache.ByObject{Transform: cacheSecret}},
	{object: &corev1.ConfigMap{}, list: func() client.ObjectList { return &corev1.ConfigMapList{} }, pruned: true,
		transform: applyset.Summarize(vocabulary.FieldManager, trimConfigMap)},
	{object: &corev1.Service{}, list: func() client.ObjectList { return &corev1.ServiceList{} }, pruned: true,
		transform: applyset.Summarize(vocabulary.FieldManager, trimService)},
	{object: &appsv1.StatefulSet{}, list: func() client.ObjectList { return &appsv1.StatefulSetList{} }, pruned: true,
		transform: applyset.Summarize(vocabulary.FieldManager, trimStatefulSet)},
	{object: &policyv1.PodDisruptionBudget{}, list: func() client.ObjectList { return &policyv1.PodDisruptionBudgetList{} }, pruned: true,
		transform: applyset.Summarize[policyv1.PodDisruptionBudget](vocabulary.FieldManager, nil)},
}

// MemberKinds are the kinds an operator ApplySet may have members of; the
// parent's contains-group-kinds annotation lists them all, so it never changes.
var MemberKinds = func() []schema.GroupKind {
	gks := make([]schema.GroupKind, 0, len(childKinds))
	for _, k := range childKinds {
		gvk, err := apiutil.GVKForObject(k.object, clientgoscheme.Scheme)
		if err != nil {
			panic(err) // every child kind is a built-in kind
		}
		gks = append(gks, gvk.GroupKind())
	}
	return gks
}()

// Objects returns an empty object of each kind of child, for the
// reconciler's watches.
func Objects() []client.Object {
	objs := make([]client.Object, 0, len(childKinds))
	for _, k := range childKinds {
		objs = append(objs, k.object)
	}
	return objs
}

// PrunedLists returns an empty list of each pruned kind.
func PrunedLists() []client.ObjectList {
	lists := make([]client.ObjectList, 0, len(childKinds))
	for _, k := range childKinds {
		if k.pruned {
			lists = append(lists, k.list())
		}
	}
	return lists
}

// IndexPrunable registers the cache index Prune lists the pruned kinds by.
func IndexPrunable(ctx context.Context, indexer client.FieldIndexer) error {
	objs := make([]client.Object, 0, len(childKinds))
	for _, k := range childKinds {
		if k.pruned {
			objs = append(objs, k.object)
		}
	}
	return applyset.IndexMembers(ctx, indexer, objs...)
}
