package applyset

import (
	"context"
	"fmt"
	"reflect"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// applyConfiguration is what a typed client-go apply configuration offers.
type applyConfiguration interface {
	runtime.ApplyConfiguration
	GetName() *string
	GetNamespace() *string
	GetKind() *string
	GetAPIVersion() *string
}

// Member is one desired object of an ApplySet: its apply configuration and
// the typed object its live state is read into.
type Member struct {
	desired applyConfiguration
	newLive func() client.Object
}

// Of makes a Member of an apply configuration, read into objects of type L:
// for example Of[corev1.ConfigMap](cm).
func Of[L any, PL interface {
	*L
	client.Object
}, A applyConfiguration](desired A) Member {
	return Member{desired: desired, newLive: func() client.Object { return PL(new(L)) }}
}

// Name returns the member's name.
func (m Member) Name() string { return deref(m.desired.GetName()) }

// Key returns the member's namespace and name.
func (m Member) Key() types.NamespacedName {
	return types.NamespacedName{Namespace: deref(m.desired.GetNamespace()), Name: m.Name()}
}

// NewObject returns an empty typed object of the member's kind, to read
// its live state into.
func (m Member) NewObject() client.Object { return m.newLive() }

// Desired returns the member's apply configuration, for a caller that
// must mend a live object an apply of it cannot.
func (m Member) Desired() runtime.ApplyConfiguration { return m.desired }

// Kind returns the member's kind.
func (m Member) Kind() string { return deref(m.desired.GetKind()) }

// GroupKind returns the member's group and kind.
func (m Member) GroupKind() schema.GroupKind {
	gv, _ := schema.ParseGroupVersion(deref(m.desired.GetAPIVersion()))
	return gv.WithKind(m.Kind()).GroupKind()
}

// Result says what Apply did to one member.
type Result string

// Results of applying a member.
const (
	// Unchanged means the owned fields already matched: nothing was sent.
	Unchanged Result = "Unchanged"
	// Created means the member did not exist and was applied.
	Created Result = "Created"
	// Updated means the owned fields differed and the member was applied.
	Updated Result = "Updated"
	// Awaiting means nothing was sent because the member is in flux: it was
	// applied less than AwaitCache ago and the cache has not shown it yet,
	// or it is being deleted. Reconcile again after AwaitCache, in case it
	// was deleted before the cache saw it.
	Awaiting Result = "Awaiting"
)

// AwaitCache is how long Apply trusts its own recent apply of a member the
// cache does not show yet. A reconcile woken by one child's event can run
// before the cache has seen another child just created; without this it
// would create that child again.
const AwaitCache = 10 * time.Second

// Applier server-side applies members and prunes the rest of an ApplySet.
// Reader should be the informer cache; it must keep the managedFields entries
// of FieldManager (see StripForeignManagedFields), or summaries of them
// (see Summarize).
type Applier struct {
	// Client sends the applies and deletes.
	Client client.Client
	// Reader reads the live members, usually the manager's cache.
	Reader client.Reader
	// FieldManager is the one field manager the applies use.
	FieldManager string
	// Seen, when set, remembers the members just applied, and those whose
	// summary differs in form from their desired one (see Seen).
	Seen *Seen
}

// Apply applies m unless the fields the field manager owns on the live object
// already equal the desired ones, and says what it did.
func (a Applier) Apply(ctx context.Context, m Member) (Result, error) {
	live := m.newLive()
	key := m.Key()
	kind := m.Kind()
	hash, err := appliedSummary(m.desired)
	if err != nil {
		return "", fmt.Errorf("hash %s %s: %w", kind, key.Name, err)
	}
	seenKey := kind + "/" + key.String()
	result := Created
	// Read only: from a cache, live is the cache's own object.
	switch err := a.Reader.Get(ctx, key, live, client.UnsafeDisableDeepCopy); {
	case apierrors.IsNotFound(err) && a.Seen.awaiting(seenKey, hash):
		return Awaiting, nil
	case apierrors.IsNotFound(err):
	case err != nil:
		return "", fmt.Errorf("get %s %s: %w", kind, key.Name, err)
	case live.GetDeletionTimestamp() != nil:
		// An apply would only change an object on its way out; once it is
		// gone, the member is created anew.
		return Awaiting, nil
	case a.Seen.behind(seenKey, live):
		// The cache has not shown the last apply yet; its event will
		// bring another reconcile.
		return Awaiting, nil
	case a.Seen.unchanged(seenKey, live, a.FieldManager, hash):
		return Unchanged, nil
	default:
		result = Updated
	}
	// Apply fills the apply configuration with the server's answer, so its
	// resourceVersion is the one the object has after this apply.
	if err := a.Client.Apply(ctx, m.desired, client.FieldOwner(a.FieldManager), client.ForceOwnership); err != nil {
		return "", fmt.Errorf("apply %s %s: %w", kind, key.Name, err)
	}
	if answer := answerMeta(m.desired); answer != nil && answer.UID != nil {
		var generation int64
		if answer.Generation != nil {
			generation = *answer.Generation
		}
		a.Seen.applied(seenKey, *answer.UID, deref(answer.ResourceVersion), generation, hash)
	}
	return result, nil
}

// IndexPartOf names the cache index of ApplySet members by their part-of
// label. Prune lists through it, so that it reads the members of one
// ApplySet rather than every object of the namespace and copies none;
// IndexMembers registers it.
const IndexPartOf = "applyset.kubernetes.io/part-of"

// IndexMembers registers the IndexPartOf index of each kind of objs.
func IndexMembers(ctx context.Context, indexer client.FieldIndexer, objs ...client.Object) error {
	for _, o := range objs {
		if err := indexer.IndexField(ctx, o, IndexPartOf, partOf); err != nil {
			return fmt.Errorf("index %T by %s: %w", o, LabelPartOf, err)
		}
	}
	return nil
}

func partOf(o client.Object) []string {
	if id, ok := o.GetLabels()[LabelPartOf]; ok {
		return []string{id}
	}
	return nil
}

// Prune deletes the objects of the given list kinds in namespace that are
// members of the ApplySet id but are not named in keep, and returns them.
// Reader must be a cache with the IndexPartOf index of those kinds.
func (a Applier) Prune(ctx context.Context, id, namespace string, lists []client.ObjectList, keep map[schema.GroupKind]map[string]bool) ([]*corev1.ObjectReference, error) {
	var pruned []*corev1.ObjectReference
	for _, list := range lists {
		items, err := a.Members(ctx, id, namespace, list)
		if err != nil {
			return pruned, err
		}
		for _, obj := range items {
			gvk, err := apiutil.GVKForObject(obj, a.Client.Scheme())
			if err != nil {
				return pruned, err
			}
			if keep[gvk.GroupKind()][obj.GetName()] || obj.GetDeletionTimestamp() != nil {
				continue
			}
			a.Seen.forget(gvk.Kind + "/" + client.ObjectKeyFromObject(obj).String())
			uid := obj.GetUID()
			err = a.Client.Delete(ctx, obj, &client.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
			if client.IgnoreNotFound(err) != nil {
				return pruned, fmt.Errorf("prune %s %s: %w", gvk.Kind, obj.GetName(), err)
			}
			pruned = append(pruned, &corev1.ObjectReference{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Namespace: namespace, Name: obj.GetName()})
		}
	}
	return pruned, nil
}

// Members lists into list the members of the ApplySet id in namespace, of
// the list's kind, and returns them. Reader must be a cache with the
// IndexPartOf index of that kind. The objects are the cache's own: read
// only.
func (a Applier) Members(ctx context.Context, id, namespace string, list client.ObjectList) ([]client.Object, error) {
	if err := a.Reader.List(ctx, list, client.InNamespace(namespace), client.MatchingFields{IndexPartOf: id}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("list %T: %w", list, err)
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil, err
	}
	objs := make([]client.Object, 0, len(items))
	for _, item := range items {
		objs = append(objs, item.(client.Object))
	}
	return objs, nil
}

// StripForeignManagedFields returns a cache transform that drops every
// managedFields entry but those of fieldManager, so that the cache stays
// small and still lets Apply summarize the operator's own fields.
func StripForeignManagedFields(fieldManager string) func(any) (any, error) {
	return func(in any) (any, error) {
		obj, err := meta.Accessor(in)
		if err != nil {
			return in, nil
		}
		var own []metav1.ManagedFieldsEntry
		for _, e := range obj.GetManagedFields() {
			if e.Manager == fieldManager && e.Operation == metav1.ManagedFieldsOperationApply {
				own = append(own, e)
			}
		}
		obj.SetManagedFields(own)
		return in, nil
	}
}

// answerMeta returns the metadata of a typed apply configuration, which
// holds the server's answer after an apply. The generated types embed it
// without an accessor for its UID and resourceVersion.
func answerMeta(ac any) *metav1ac.ObjectMetaApplyConfiguration {
	v := reflect.ValueOf(ac)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return nil
	}
	f := v.Elem().FieldByName("ObjectMetaApplyConfiguration")
	if !f.IsValid() {
		return nil
	}
	m, _ := f.Interface().(*metav1ac.ObjectMetaApplyConfiguration)
	return m
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
