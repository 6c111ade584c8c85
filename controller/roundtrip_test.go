package controller

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	policyv1ac "k8s.io/client-go/applyconfigurations/policy/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/applyset"
)

// TestChildrenRoundTrip applies every child of a full MySQL to the API
// server and extracts the operator's fields back: they must equal what was
// applied. A field the server defaults inside an atomic struct the
// operator owns would differ, and every manager restart (a cold Seen
// cache) would apply every child again.
func TestChildrenRoundTrip(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	for _, m := range []*databasev1.MySQL{sample(nil), sample(func(m *databasev1.MySQL) {
		m.Name, m.Spec.Replicas, m.Spec.Engine, m.Spec.Version = "maria", 3, databasev1.EngineMariaDB, "10.11"
	})} {
		m.Namespace = ns
		m.Spec.StorageClassName = nil
		// Apply fills an apply configuration with the server's answer:
		// each pass renders the children anew.
		members := func() []applyset.Member {
			return []applyset.Member{
				applyset.Of(RootSecret(m, []byte("pw")), corev1ac.ExtractSecret),
				applyset.Of(OperatorSecret(m, testPasswords), corev1ac.ExtractSecret),
				applyset.Of(ConfigMap(m), corev1ac.ExtractConfigMap),
				applyset.Of(HeadlessService(m), corev1ac.ExtractService),
				applyset.Of(Service(m), corev1ac.ExtractService),
				applyset.Of(PrimaryService(m), corev1ac.ExtractService),
				applyset.Of(ReplicasService(m), corev1ac.ExtractService),
				applyset.Of(StatefulSet(m, testAgentImage), appsv1ac.ExtractStatefulSet),
				applyset.Of(PodDisruptionBudget(m), policyv1ac.ExtractPodDisruptionBudget),
			}
		}
		a := applyset.Applier{Client: env.Client, Reader: env.Client, FieldManager: FieldManager}
		for _, member := range members() {
			if _, err := a.Apply(ctx, member); err != nil {
				t.Fatalf("%s %s: %v", member.Kind(), member.Name(), err)
			}
		}
		for _, member := range members() {
			// No Seen cache: Apply extracts and compares.
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
		summarized := applyset.Applier{Client: env.Client, Reader: summaryReader{env.Client}, FieldManager: FieldManager}
		for _, member := range members() {
			if got, err := summarized.Apply(ctx, member); err != nil || got != applyset.Unchanged {
				t.Errorf("%s %s through its summary: %s, %v; want %s", member.Kind(), member.Name(), got, err, applyset.Unchanged)
			}
		}
	}
	// A summary that differs from the desired state is applied.
	m := sample(nil)
	m.Namespace, m.Spec.StorageClassName, m.Spec.Replicas = ns, nil, 4
	summarized := applyset.Applier{Client: env.Client, Reader: summaryReader{env.Client}, FieldManager: FieldManager}
	if got, err := summarized.Apply(ctx, applyset.Of(StatefulSet(m, testAgentImage), appsv1ac.ExtractStatefulSet)); err != nil || got != applyset.Updated {
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
