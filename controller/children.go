package controller

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	policyv1ac "k8s.io/client-go/applyconfigurations/policy/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/applyset"
)

// Event reasons the reconciler records on a MySQL.
const (
	// EventApplied: children were created, or their owned fields changed to
	// the desired state; one event per reconcile lists them all.
	EventApplied = "Applied"
	// EventPruned: children no longer desired were deleted; one event per
	// reconcile lists them.
	EventPruned = "Pruned"
	// EventStalled: the spec cannot be realised; see the Stalled condition.
	EventStalled = "Stalled"
)

// memberKinds are the kinds an operator ApplySet may have members of; the
// parent's contains-group-kinds annotation lists them all, so it never changes.
var memberKinds = []schema.GroupKind{
	{Kind: "Secret"}, {Kind: "ConfigMap"}, {Kind: "Service"},
	{Group: "apps", Kind: "StatefulSet"}, {Group: "policy", Kind: "PodDisruptionBudget"},
}

// prunable are the kinds pruned when no longer desired, as an object and a
// list. Secrets are never pruned: a generated root password is kept as long
// as its MySQL.
var prunable = []struct {
	object client.Object
	list   func() client.ObjectList
}{
	{&corev1.ConfigMap{}, func() client.ObjectList { return &corev1.ConfigMapList{} }},
	{&corev1.Service{}, func() client.ObjectList { return &corev1.ServiceList{} }},
	{&appsv1.StatefulSet{}, func() client.ObjectList { return &appsv1.StatefulSetList{} }},
	{&policyv1.PodDisruptionBudget{}, func() client.ObjectList { return &policyv1.PodDisruptionBudgetList{} }},
}

// indexPrunable registers the cache index Prune lists the prunable kinds by.
func indexPrunable(ctx context.Context, indexer client.FieldIndexer) error {
	objs := make([]client.Object, 0, len(prunable))
	for _, p := range prunable {
		objs = append(objs, p.object)
	}
	return applyset.IndexMembers(ctx, indexer, objs...)
}

// reconcileParent labels the MySQL as its children's ApplySet parent.
func (r *Reconciler) reconcileParent(ctx context.Context, obj *databasev1.MySQL) error {
	_, err := r.applier().ApplyParent(ctx, obj, applyset.ParentAnnotations(Tooling, memberKinds))
	return err
}

// desiredChildren returns the children the MySQL should have, in apply order.
func (r *Reconciler) desiredChildren(ctx context.Context, obj *databasev1.MySQL) ([]applyset.Member, error) {
	secret, err := r.rootSecret(ctx, obj)
	if err != nil {
		return nil, err
	}
	var members []applyset.Member
	if secret != nil {
		members = append(members, applyset.Of(secret, corev1ac.ExtractSecret))
	}
	members = append(members,
		applyset.Of(ConfigMap(obj), corev1ac.ExtractConfigMap),
		applyset.Of(HeadlessService(obj), corev1ac.ExtractService),
		applyset.Of(Service(obj), corev1ac.ExtractService),
		applyset.Of(StatefulSet(obj), appsv1ac.ExtractStatefulSet),
	)
	if obj.Spec.Replicas > 1 {
		members = append(members, applyset.Of(PodDisruptionBudget(obj), policyv1ac.ExtractPodDisruptionBudget))
	}
	return members, nil
}

// rootSecret returns the apply configuration of the generated root password
// Secret, or nil when the MySQL names its own Secret and never had a
// generated one. A password is generated only when the Secret is absent from
// both the cache and the API server, so that a cold or stale cache never
// regenerates one; once stored it is re-applied unchanged for ever.
func (r *Reconciler) rootSecret(ctx context.Context, obj *databasev1.MySQL) (*corev1ac.SecretApplyConfiguration, error) {
	if ref := obj.Spec.RootPasswordSecretRef; ref != nil {
		if err := r.checkSecretRef(ctx, obj); err != nil {
			return nil, err
		}
	}
	key := types.NamespacedName{Namespace: obj.Namespace, Name: RootSecretName(obj)}
	existing := &corev1.Secret{}
	err := r.Client.Get(ctx, key, existing)
	if apierrors.IsNotFound(err) {
		err = r.APIReader.Get(ctx, key, existing)
	}
	switch {
	case err == nil:
		password, ok := existing.Data[rootPasswordKey]
		if !ok {
			return nil, stalled(ReasonSecretInvalid, "Secret %s has no key %q: restore it, the operator never regenerates a root password", key.Name, rootPasswordKey)
		}
		return RootSecret(obj, password), nil
	case !apierrors.IsNotFound(err):
		return nil, fmt.Errorf("get Secret %s: %w", key.Name, err)
	case obj.Spec.RootPasswordSecretRef != nil:
		return nil, nil
	}
	password, err := generatePassword()
	if err != nil {
		return nil, err
	}
	return RootSecret(obj, password), nil
}

// generatePassword returns 32 random characters from crypto/rand.
func generatePassword() ([]byte, error) {
	raw := make([]byte, 24)
	if _, err := rand.Read(raw); err != nil {
		return nil, fmt.Errorf("generate root password: %w", err)
	}
	return []byte(base64.RawURLEncoding.EncodeToString(raw)), nil
}

// checkSecretRef stalls the MySQL when rootPasswordSecretRef names a Secret
// or key that does not exist. The cache holds every Secret's keys but only
// the operator's own Secrets' values.
func (r *Reconciler) checkSecretRef(ctx context.Context, obj *databasev1.MySQL) error {
	name, key := PasswordRef(obj)
	s := &corev1.Secret{}
	switch err := r.Client.Get(ctx, types.NamespacedName{Namespace: obj.Namespace, Name: name}, s); {
	case apierrors.IsNotFound(err):
		return stalled(ReasonSecretNotFound, "rootPasswordSecretRef: Secret %s not found in namespace %s", name, obj.Namespace)
	case err != nil:
		return fmt.Errorf("get Secret %s: %w", name, err)
	}
	if _, ok := s.Data[key]; !ok {
		return stalled(ReasonSecretInvalid, "rootPasswordSecretRef: Secret %s has no key %q", name, key)
	}
	return nil
}

// applyChildren applies each member that differs from its desired state and
// records what changed in obs.
// One event lists every child applied, so that a new MySQL costs one event
// write rather than one per child.
func (r *Reconciler) applyChildren(ctx context.Context, obj *databasev1.MySQL, members []applyset.Member, obs *observation) error {
	log := ctrl.LoggerFrom(ctx)
	a := r.applier()
	var applied []string
	defer func() {
		if len(applied) > 0 {
			r.Recorder.Eventf(obj, nil, corev1.EventTypeNormal, EventApplied, "Apply", "%s", strings.Join(applied, ", "))
		}
	}()
	for _, m := range members {
		result, err := a.Apply(ctx, m)
		if err != nil {
			if apierrors.IsInvalid(err) || apierrors.IsForbidden(err) || apierrors.IsBadRequest(err) {
				return stalled(ReasonApplyRejected, "%v", err)
			}
			return err
		}
		switch result {
		case applyset.Unchanged:
			continue
		case applyset.Awaiting:
			obs.awaiting = true
			continue
		}
		obs.changed = append(obs.changed, m.Kind()+"/"+m.Name())
		log.Info("applied child", "kind", m.Kind(), "child", m.Name(), "result", result)
		applied = append(applied, fmt.Sprintf("%s/%s %s", m.Kind(), m.Name(), strings.ToLower(string(result))))
	}
	return nil
}

// awaitingAfter is how soon to reconcile again when a child applied moments
// ago is not in the cache yet, zero otherwise.
func awaitingAfter(obs *observation) time.Duration {
	if obs.awaiting {
		return applyset.AwaitCache
	}
	return 0
}

// prune deletes the members of the MySQL's ApplySet that are no longer desired.
func (r *Reconciler) prune(ctx context.Context, obj *databasev1.MySQL, members []applyset.Member) error {
	keep := map[schema.GroupKind]map[string]bool{}
	for _, m := range members {
		gk := m.GroupKind()
		if keep[gk] == nil {
			keep[gk] = map[string]bool{}
		}
		keep[gk][m.Name()] = true
	}
	lists := make([]client.ObjectList, 0, len(prunable))
	for _, p := range prunable {
		lists = append(lists, p.list())
	}
	pruned, err := r.applier().Prune(ctx, parent(obj).ID(), obj.Namespace, lists, keep)
	names := make([]string, 0, len(pruned))
	for _, p := range pruned {
		ctrl.LoggerFrom(ctx).Info("pruned child", "kind", p.Kind, "child", p.Name)
		names = append(names, p.Kind+"/"+p.Name+" pruned")
	}
	if len(names) > 0 {
		r.Recorder.Eventf(obj, nil, corev1.EventTypeNormal, EventPruned, "Prune", "%s", strings.Join(names, ", "))
	}
	return err
}

// indexSecretRef indexes MySQLs by the Secret their rootPasswordSecretRef names.
const indexSecretRef = ".spec.rootPasswordSecretRef.name"

func secretRefIndex(o client.Object) []string {
	if ref := o.(*databasev1.MySQL).Spec.RootPasswordSecretRef; ref != nil {
		return []string{ref.Name}
	}
	return nil
}

// mysqlsForSecret maps a Secret to the MySQLs whose rootPasswordSecretRef names it.
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
