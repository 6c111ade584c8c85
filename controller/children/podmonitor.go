package children

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/controller/vocabulary"
)

// PodMonitorName is the name of the MySQL's PodMonitor.
func PodMonitorName(m *databasev1.MySQL) string { return m.Name + "-mysql" }

// PodMonitor returns the Prometheus operator's PodMonitor of the MySQL's
// agents (monitoring.coreos.com/v1, written as an unstructured object
// where that kind is installed; see docs/metrics.md): the pods' agent
// port at /metrics, every series labelled mysql with the MySQL's name.
func PodMonitor(m *databasev1.MySQL) *unstructured.Unstructured {
	selector := map[string]any{}
	for k, v := range SelectorLabels(m) {
		selector[k] = v
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "monitoring.coreos.com/v1",
		"kind":       "PodMonitor",
		"metadata":   extraMetadata(m, PodMonitorName(m)),
		"spec": map[string]any{
			"selector": map[string]any{"matchLabels": selector},
			"podMetricsEndpoints": []any{map[string]any{
				"port": agentPortName,
				"path": "/metrics",
				"relabelings": []any{map[string]any{
					"sourceLabels": []any{"__meta_kubernetes_pod_label_" + sanitizedLabel(vocabulary.LabelInstance)},
					"targetLabel":  "mysql",
				}},
			}},
		},
	}}
}

// extraMetadata is the metadata of an object written outside the
// ApplySet: the pods' labels, and the MySQL as its controlling owner.
func extraMetadata(m *databasev1.MySQL, name string) map[string]any {
	labels := map[string]any{}
	for k, v := range PodLabels(m) {
		labels[k] = v
	}
	return map[string]any{
		"name": name, "namespace": m.Namespace, "labels": labels,
		"ownerReferences": []any{map[string]any{"apiVersion": databasev1.GroupVersion.String(), "kind": databasev1.MySQLKind,
			"name": m.Name, "uid": string(m.UID), "controller": true, "blockOwnerDeletion": true}},
	}
}

// sanitizedLabel is a Kubernetes label's name as Prometheus's service
// discovery spells it: every character that is not a letter, a digit or
// an underscore becomes an underscore.
func sanitizedLabel(name string) string {
	b := []byte(name)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			b[i] = '_'
		}
	}
	return string(b)
}
