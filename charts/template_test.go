package charts_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestTemplateMatchesKustomize renders the chart with its defaults as
// release mysql-operator in mysql-operator-system and compares it with
// kustomize/default, which has the same names: every object kustomize
// makes (but the Namespace, which `--create-namespace` makes) is rendered,
// the CRDs are equal, the RBAC rules are those of kustomize/rbac, and the
// Deployment runs the manager the same way.
func TestTemplateMatchesKustomize(t *testing.T) {
	chart := render(t, nil)
	kust := kustomizeBuild(t, "default")
	for _, k := range kust {
		if k.GetKind() == "Namespace" {
			continue
		}
		c := find(chart, k.GetKind(), k.GetName())
		if c == nil {
			t.Errorf("kustomize/default has %s %s, the chart does not", k.GetKind(), k.GetName())
			continue
		}
		if c.GetNamespace() != k.GetNamespace() && !(c.GetKind() == "CustomResourceDefinition" || strings.HasPrefix(c.GetKind(), "Cluster")) {
			t.Errorf("%s %s: namespace %q, kustomize's %q", k.GetKind(), k.GetName(), c.GetNamespace(), k.GetNamespace())
		}
		switch k.GetKind() {
		case "CustomResourceDefinition":
			sameField(t, c, k, "spec")
		case "ClusterRole", "Role":
			sameField(t, c, k, "rules")
		case "ClusterRoleBinding", "RoleBinding":
			sameField(t, c, k, "roleRef")
			sameField(t, c, k, "subjects")
		case "Service":
			sameField(t, c, k, "spec", "ports")
		case "Deployment":
			sameManager(t, c, k)
		}
	}
	if n := len(chart); n != len(kust)-1 {
		t.Errorf("the chart renders %d objects, kustomize/default %d besides its Namespace", n, len(kust)-1)
	}
}

// sameField fails the test when a field of the chart's object differs
// from the kustomize one.
func sameField(t *testing.T, chart, kust *unstructured.Unstructured, path ...string) {
	t.Helper()
	if got, want := field(chart, path...), field(kust, path...); !reflect.DeepEqual(got, want) {
		t.Errorf("%s %s: %s differs from kustomize's\nchart:     %v\nkustomize: %v", chart.GetKind(), chart.GetName(), strings.Join(path, "."), got, want)
	}
}

// sameManager compares the chart's Deployment with kustomize's: replicas,
// service account, pod security context, and everything of the container
// but the args, which are kustomize's followed by --zap-log-level=info.
func sameManager(t *testing.T, chart, kust *unstructured.Unstructured) {
	t.Helper()
	sameField(t, chart, kust, "spec", "replicas")
	for _, f := range []string{"serviceAccountName", "securityContext", "terminationGracePeriodSeconds"} {
		sameField(t, chart, kust, "spec", "template", "spec", f)
	}
	c, k := container(t, chart), container(t, kust)
	for _, f := range []string{"name", "image", "env", "ports", "securityContext", "livenessProbe", "readinessProbe", "resources"} {
		if !reflect.DeepEqual(c[f], k[f]) {
			t.Errorf("manager container: %s differs from kustomize's\nchart:     %v\nkustomize: %v", f, c[f], k[f])
		}
	}
	if got, want := args(t, chart), append(args(t, kust), "--zap-log-level=info"); !slices.Equal(got, want) {
		t.Errorf("manager args %q, want kustomize's and the log level: %q", got, want)
	}
}

// TestTemplateRBACIsGenerated checks the roles against
// kustomize/rbac/role.yaml itself, and that the bindings bind the rendered
// roles to the rendered ServiceAccount, the one the Deployment runs as.
func TestTemplateRBACIsGenerated(t *testing.T) {
	objs := render(t, nil)
	for _, want := range readObjects(t, "kustomize/rbac/role.yaml") {
		got := mustFind(t, objs, want.GetKind(), "mysql-operator-"+want.GetName())
		sameField(t, got, want, "rules")
		if want.GetKind() == "Role" && got.GetNamespace() != namespace {
			t.Errorf("Role %s in namespace %q, want the release's", got.GetName(), got.GetNamespace())
		}
	}
	deploy := mustFind(t, objs, "Deployment", manager)
	sa := field(deploy, "spec", "template", "spec", "serviceAccountName").(string)
	mustFind(t, objs, "ServiceAccount", sa)
	for _, b := range objs {
		if !strings.HasSuffix(b.GetKind(), "RoleBinding") {
			continue
		}
		ref := field(b, "roleRef").(map[string]any)
		mustFind(t, objs, ref["kind"].(string), ref["name"].(string))
		subjects := field(b, "subjects").([]any)
		if s := subjects[0].(map[string]any); len(subjects) != 1 || s["name"] != sa || s["namespace"] != namespace {
			t.Errorf("%s %s binds %v, want ServiceAccount %s/%s", b.GetKind(), b.GetName(), subjects, namespace, sa)
		}
	}
	for _, o := range objs {
		rules, _ := field(o, "rules").([]any)
		for _, r := range rules {
			for _, list := range []string{"apiGroups", "resources", "verbs", "nonResourceURLs"} {
				if items, _ := r.(map[string]any)[list].([]any); slices.Contains(items, any("*")) {
					t.Errorf("%s %s: a wildcard in %s", o.GetKind(), o.GetName(), list)
				}
			}
		}
	}
}
