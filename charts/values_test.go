package charts_test

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestValuesChangeTheManager renders the chart with changedValues and
// checks each value lands where it should, while the security contexts
// stay those of the defaults.
func TestValuesChangeTheManager(t *testing.T) {
	defaults := mustFind(t, render(t, nil), "Deployment", manager)
	objs := render(t, changedValues())
	deploy := mustFind(t, objs, "Deployment", manager)
	c := container(t, deploy)
	if got := field(deploy, "spec", "replicas"); fmt.Sprint(got) != "3" {
		t.Errorf("replicas %v, want 3", got)
	}
	wantArgs := []string{"--leader-elect", "--health-probe-bind-address=:8081", "--metrics-bind-address=:9443",
		"--metrics-secure=false", "--zap-log-level=debug", "--max-concurrent-reconciles=8"}
	if got := args(t, deploy); !slices.Equal(got, wantArgs) {
		t.Errorf("args %q, want %q", got, wantArgs)
	}
	if c["image"] != "registry.example.com/mysql-operator:v0.2.0" || c["imagePullPolicy"] != "Always" {
		t.Errorf("image %v pull policy %v", c["image"], c["imagePullPolicy"])
	}
	if want := changedValues()["resources"]; !reflect.DeepEqual(c["resources"], want) {
		t.Errorf("resources %v, want %v", c["resources"], want)
	}
	pod := []string{"spec", "template", "spec"}
	for _, f := range []string{"nodeSelector", "tolerations"} {
		if got, want := field(deploy, append(pod, f)...), changedValues()[f]; !reflect.DeepEqual(got, want) {
			t.Errorf("%s %v, want %v", f, got, want)
		}
	}
	if got := field(deploy, "spec", "template", "metadata", "annotations"); !reflect.DeepEqual(got, changedValues()["podAnnotations"]) {
		t.Errorf("pod annotations %v", got)
	}
	sameField(t, deploy, defaults, append(pod, "securityContext")...)
	if d := container(t, defaults); !reflect.DeepEqual(c["securityContext"], d["securityContext"]) {
		t.Errorf("container securityContext %v, want the defaults' %v", c["securityContext"], d["securityContext"])
	}
	ports := c["ports"].([]any)
	if p := ports[0].(map[string]any); p["name"] != "metrics" || fmt.Sprint(p["containerPort"]) != "9443" {
		t.Errorf("metrics port %v, want 9443", p)
	}
	svc := mustFind(t, objs, "Service", manager+"-metrics")
	if p := field(svc, "spec", "ports").([]any)[0].(map[string]any); p["name"] != "http" || fmt.Sprint(p["port"]) != "9443" {
		t.Errorf("metrics Service port %v, want http 9443", p)
	}
	pdb := mustFind(t, objs, "PodDisruptionBudget", manager)
	if got, want := field(pdb, "spec", "selector", "matchLabels"), field(deploy, "spec", "selector", "matchLabels"); !reflect.DeepEqual(got, want) {
		t.Errorf("PodDisruptionBudget selects %v, the Deployment %v", got, want)
	}
}

// TestValuesTurnThingsOff renders the chart without leader election,
// metrics and its own ServiceAccount.
func TestValuesTurnThingsOff(t *testing.T) {
	objs := render(t, map[string]any{
		"leaderElection": map[string]any{"enabled": false},
		"metrics":        map[string]any{"enabled": false},
		"serviceAccount": map[string]any{"create": false, "name": "existing"},
	})
	deploy := mustFind(t, objs, "Deployment", manager)
	want := []string{"--health-probe-bind-address=:8081", "--metrics-bind-address=0", "--zap-log-level=info"}
	if got := args(t, deploy); !slices.Equal(got, want) {
		t.Errorf("args %q, want %q", got, want)
	}
	for _, p := range container(t, deploy)["ports"].([]any) {
		if p.(map[string]any)["name"] == "metrics" {
			t.Error("a metrics port without metrics")
		}
	}
	for _, o := range objs {
		if o.GetKind() == "ServiceAccount" || o.GetKind() == "Service" || strings.HasSuffix(o.GetName(), "metrics-reader") {
			t.Errorf("%s %s rendered", o.GetKind(), o.GetName())
		}
	}
	if sa := field(deploy, "spec", "template", "spec", "serviceAccountName"); sa != "existing" {
		t.Errorf("service account %v, want existing", sa)
	}
	binding := mustFind(t, objs, "ClusterRoleBinding", "mysql-operator-manager-rolebinding")
	if s := field(binding, "subjects").([]any)[0].(map[string]any); s["name"] != "existing" {
		t.Errorf("the ClusterRoleBinding binds %v, want existing", s)
	}
}

// TestValuesRefused checks that values that cannot work fail to render
// (and so to lint, install or upgrade) with a message naming the value.
func TestValuesRefused(t *testing.T) {
	for name, tc := range map[string]struct {
		vals map[string]any
		want string
	}{
		"replicas without leader election": {map[string]any{"replicaCount": 2, "leaderElection": map[string]any{"enabled": false}}, "leaderElection.enabled"},
		"no ServiceAccount and no name":    {map[string]any{"serviceAccount": map[string]any{"create": false}}, "serviceAccount.name"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := renderRelease(t, tc.vals)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("render: %v, want an error naming %s", err, tc.want)
			}
		})
	}
}
