package children

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/applyset"
	"github.com/example/mysql-operator/controller/vocabulary"
	"github.com/example/mysql-operator/internal/testenv"
)

// TestChildrenRoundTrip applies every child of a full MySQL to the API
// server and applies it again: the second apply must find it unchanged, by
// the summary of its managedFields entry (and through the cache's
// summaries). The set of fields the server records for the operator must
// be the one Apply computes from the apply configuration, or every manager
// restart would apply every child again.
func TestChildrenRoundTrip(t *testing.T) {
	ctx := context.Background()
	ns := testenv.NewNamespace(t, env.Client)
	for _, m := range []*databasev1.MySQL{sample(nil), sample(func(m *databasev1.MySQL) {
		m.Name, m.Spec.Replicas, m.Spec.Engine, m.Spec.Version = "maria", 3, databasev1.EngineMariaDB, "10.11"
	})} {
		m.Namespace = ns
		m.Spec.StorageClassName = nil
		// Apply fills an apply configuration with the server's answer:
		// each pass renders the children anew.
		members := func() []applyset.Member {
			return []applyset.Member{
				applyset.Of[corev1.Secret](RootSecret(m, []byte("pw"))),
				applyset.Of[corev1.Secret](OperatorSecret(m, testPasswords)),
				applyset.Of[corev1.ConfigMap](ConfigMap(m)),
				applyset.Of[corev1.Service](HeadlessService(m)),
				applyset.Of[corev1.Service](Service(m)),
				applyset.Of[corev1.Service](PrimaryService(m)),
				applyset.Of[corev1.Service](ReplicasService(m)),
				applyset.Of[appsv1.StatefulSet](StatefulSet(m, testAgent)),
				applyset.Of[policyv1.PodDisruptionBudget](PodDisruptionBudget(m)),
			}
		}
		a := applyset.Applier{Client: env.Client, Reader: env.Client, FieldManager: vocabulary.FieldManager}
		for _, member := range members() {
			if _, err := a.Apply(ctx, member); err != nil {
				t.Fatalf("%s %s: %v", member.Kind(), member.Name(), err)
			}
		}
		for _, member := range members() {
			// No Seen cache: Apply compares the summaries.
			got, err := a.Apply(ctx, member)
			if err != nil {
				t.Fatal(err)
			}
			if got != applyset.Unchanged {
				t.Errorf("%s %s: a second apply found a difference (%s): a field the server defaults is owned", member.Kind(), member.Name(), got)
			}
		}
		// Through the cache's summaries: the hash of the owned fields
		// must equal the desired configuration's, or every restart would
		// apply every child again.
		summarized := applyset.Applier{Client: env.Client, Reader: summaryReader{env.Client}, FieldManager: vocabulary.FieldManager}
		for _, member := range members() {
			if got, err := summarized.Apply(ctx, member); err != nil || got != applyset.Unchanged {
				t.Errorf("%s %s through its summary: %s, %v; want %s", member.Kind(), member.Name(), got, err, applyset.Unchanged)
			}
		}
	}
	// A summary that differs from the desired state is applied.
	m := sample(nil)
	m.Namespace, m.Spec.StorageClassName, m.Spec.Replicas = ns, nil, 4
	summarized := applyset.Applier{Client: env.Client, Reader: summaryReader{env.Client}, FieldManager: vocabulary.FieldManager}
	if got, err := summarized.Apply(ctx, applyset.Of[appsv1.StatefulSet](StatefulSet(m, testAgent))); err != nil || got != applyset.Updated {
		t.Errorf("StatefulSet with 4 replicas through its summary: %s, %v; want %s", got, err, applyset.Updated)
	}
}

// summaryReader reads objects from the API server as the manager's cache
// keeps them: through the cache transform of their kind.
type summaryReader struct{ client.Reader }

func (r summaryReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if err := r.Reader.Get(ctx, key, obj, opts...); err != nil {
		return err
	}
	for _, k := range childKinds {
		if reflect.TypeOf(k.object) != reflect.TypeOf(obj) {
			continue
		}
		transform := k.transform
		if k.cache != nil {
			transform = k.cache.Transform
		}
		if _, err := transform(obj); err != nil {
			return err
		}
		if _, ok := obj.GetAnnotations()[applyset.SummaryAnnotation]; !ok || len(obj.GetManagedFields()) > 0 {
			return fmt.Errorf("%s %s: not summarized", reflect.TypeOf(obj), key.Name)
		}
	}
	return nil
}

// TestChildOfEarlierVersion: a child an earlier version of the operator
// applied has no applied-hash annotation; the first apply adds it, once.
func TestChildOfEarlierVersion(t *testing.T) {
	ctx := context.Background()
	m := sample(nil)
	m.Namespace = testenv.NewNamespace(t, env.Client)
	if err := env.Client.Apply(ctx, ConfigMap(m), client.FieldOwner(vocabulary.FieldManager), client.ForceOwnership); err != nil {
		t.Fatal(err)
	}
	a := applyset.Applier{Client: env.Client, Reader: summaryReader{env.Client}, FieldManager: vocabulary.FieldManager}
	for i, want := range []applyset.Result{applyset.Updated, applyset.Unchanged} {
		if got, err := a.Apply(ctx, applyset.Of[corev1.ConfigMap](ConfigMap(m))); err != nil || got != want {
			t.Fatalf("apply %d: %s, %v; want %s", i+1, got, err, want)
		}
	}
	cm := &corev1.ConfigMap{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: m.Namespace, Name: ConfigMapName(m)}, cm); err != nil {
		t.Fatal(err)
	}
	if cm.Annotations[applyset.AppliedAnnotation] == "" {
		t.Errorf("annotations %v: no %s", cm.Annotations, applyset.AppliedAnnotation)
	}
}
