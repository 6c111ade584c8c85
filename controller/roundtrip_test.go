package controller

import (
	"context"
	"testing"

	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	policyv1ac "k8s.io/client-go/applyconfigurations/policy/v1"

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
	}
}
