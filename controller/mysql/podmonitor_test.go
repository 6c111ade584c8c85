package mysql

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/example/mysql-operator/internal/ctrltest"
)

// TestPodMonitor: where the PodMonitor kind is served, a MySQL gets its
// PodMonitor, owned by it, scraping the agents' port; every other test
// of this package runs without the kind, and its MySQLs converge.
func TestPodMonitor(t *testing.T) {
	ctx := context.Background()
	crd := standInCRD("monitoring.coreos.com", "podmonitors", "PodMonitor")
	if err := env.Client.Create(ctx, crd); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), crd) })
	startManager(t)
	ns := env.NewNamespace(t)
	m := ctrltest.NewMySQL(ns, "db", 1)
	env.Create(t, m)
	pm := &unstructured.Unstructured{}
	pm.SetAPIVersion("monitoring.coreos.com/v1")
	pm.SetKind("PodMonitor")
	ctrltest.Eventually(t, "the PodMonitor", func(ctx context.Context) (bool, error) {
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "db-mysql"}, pm)
		return err == nil, client.IgnoreNotFound(ignoreNoMatch(err))
	})
	if refs := pm.GetOwnerReferences(); len(refs) != 1 || refs[0].Name != "db" || refs[0].Kind != "MySQL" {
		t.Errorf("owners %+v", refs)
	}
	endpoints, _, _ := unstructured.NestedSlice(pm.Object, "spec", "podMetricsEndpoints")
	if len(endpoints) != 1 || endpoints[0].(map[string]any)["port"] != "agent" {
		t.Errorf("endpoints %v", endpoints)
	}
}
