package mysql

import (
	"context"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/example/mysql-operator/internal/ctrltest"
)

// podMonitorCRD is a minimal stand-in for the Prometheus operator's
// PodMonitor CRD: the operator needs only that the API server serves it.
func podMonitorCRD() *apiextensionsv1.CustomResourceDefinition {
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "podmonitors.monitoring.coreos.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "monitoring.coreos.com", Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "podmonitors", Singular: "podmonitor", Kind: "PodMonitor", ListKind: "PodMonitorList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: ptr.To(true)}}}},
		},
	}
}

// TestPodMonitor: where the PodMonitor kind is served, a MySQL gets its
// PodMonitor, owned by it, scraping the agents' port; every other test
// of this package runs without the kind, and its MySQLs converge.
func TestPodMonitor(t *testing.T) {
	ctx := context.Background()
	crd := podMonitorCRD()
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
