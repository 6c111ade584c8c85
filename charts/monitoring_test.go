package charts_test

import (
	"encoding/json"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestMonitoring: the PrometheusRule only where the cluster serves the
// kind, holding monitoring/rules.yaml's rules with their own {{ }} left
// for Prometheus; the dashboard's ConfigMap only when asked for, with
// the dashboard's JSON and Grafana's sidecar label. kustomize/prometheus
// renders the same two.
func TestMonitoring(t *testing.T) {
	objs := render(t, nil)
	for _, o := range objs {
		if o.GetKind() == "PrometheusRule" || (o.GetKind() == "ConfigMap" && strings.HasSuffix(o.GetName(), "-dashboard")) {
			t.Errorf("rendered %s %s by default, without the kind served", o.GetKind(), o.GetName())
		}
	}
	objs = render(t, map[string]any{"monitoring": map[string]any{"dashboard": true}}, "monitoring.coreos.com/v1/PrometheusRule")
	checkMonitoring(t, "the chart", objs)
	checkMonitoring(t, "kustomize/prometheus", kustomizeBuild(t, "prometheus"))
}

// checkMonitoring looks for the PrometheusRule and the dashboard in objs.
func checkMonitoring(t *testing.T, what string, objs []*unstructured.Unstructured) {
	t.Helper()
	var rule, dashboard *unstructured.Unstructured
	for _, o := range objs {
		switch {
		case o.GetKind() == "PrometheusRule":
			rule = o
		case o.GetKind() == "ConfigMap" && o.GetLabels()["grafana_dashboard"] == "1":
			dashboard = o
		}
	}
	if rule == nil || dashboard == nil {
		t.Fatalf("%s: PrometheusRule %v, dashboard %v", what, rule != nil, dashboard != nil)
	}
	groups, _, _ := unstructured.NestedSlice(rule.Object, "spec", "groups")
	raw, _ := json.Marshal(groups)
	if !strings.Contains(string(raw), "MySQLReplicationStopped") || !strings.Contains(string(raw), "{{ $labels.pod }}") {
		t.Errorf("%s: the PrometheusRule's groups: %s", what, raw)
	}
	var d struct {
		UID    string `json:"uid"`
		Panels []any  `json:"panels"`
	}
	data, _, _ := unstructured.NestedString(dashboard.Object, "data", "mysql-operator.json")
	if err := json.Unmarshal([]byte(data), &d); err != nil || d.UID != "mysql-operator" || len(d.Panels) == 0 {
		t.Errorf("%s: the dashboard: %v, uid %q, %d panels", what, err, d.UID, len(d.Panels))
	}
}
