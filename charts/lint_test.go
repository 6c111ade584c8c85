package charts_test

import (
	"testing"

	"helm.sh/helm/v4/pkg/action"
)

// changedValues are non-default values a platform engineer sets: the
// template and lint tests render the chart with them.
func changedValues() map[string]any {
	return map[string]any{
		"replicaCount":        3,
		"logLevel":            "debug",
		"image":               map[string]any{"repository": "registry.example.com/mysql-operator", "tag": "v0.2.0", "pullPolicy": "Always"},
		"metrics":             map[string]any{"enabled": true, "bindAddress": ":9443", "secure": false},
		"resources":           map[string]any{"requests": map[string]any{"cpu": "100m", "memory": "128Mi"}, "limits": map[string]any{"cpu": "1", "memory": "512Mi"}},
		"nodeSelector":        map[string]any{"kubernetes.io/os": "linux"},
		"tolerations":         []any{map[string]any{"key": "dedicated", "operator": "Equal", "value": "operators", "effect": "NoSchedule"}},
		"extraArgs":           []any{"--max-concurrent-reconciles=8"},
		"podAnnotations":      map[string]any{"example.com/team": "databases"},
		"podDisruptionBudget": map[string]any{"enabled": true},
	}
}

// TestLint runs `helm lint --strict` on the chart, with its defaults and
// with changedValues: no warning and no error.
func TestLint(t *testing.T) {
	for name, vals := range map[string]map[string]any{"defaults": nil, "changed values": changedValues()} {
		t.Run(name, func(t *testing.T) {
			lint := action.NewLint()
			lint.Strict = true
			lint.Namespace = namespace
			lint.KubeVersion = kubeVersion(t)
			res := lint.Run([]string{chartDir}, vals)
			for _, m := range res.Messages {
				t.Logf("lint: %s", m)
			}
			if res.TotalChartsLinted != 1 || len(res.Errors) > 0 {
				t.Errorf("lint: %d charts linted, errors %v", res.TotalChartsLinted, res.Errors)
			}
		})
	}
}
