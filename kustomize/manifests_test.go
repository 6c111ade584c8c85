// Package kustomize_test checks the delivery manifests: every overlay builds
// with kustomize and is accepted by a real kube-apiserver, the Flux and Argo
// CD objects point at paths that exist and health-check what they apply, and
// Argo CD's health check for the operator's kinds agrees with kstatus on
// every fixture.
package kustomize_test

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"github.com/example/mysql-operator/internal/testenv"
)

// build runs kustomize on a directory, as Flux's kustomize-controller does.
func build(t *testing.T, dir string) []*unstructured.Unstructured {
	t.Helper()
	resources, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	var objs []*unstructured.Unstructured
	for _, r := range resources.Resources() {
		data, err := r.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(data); err != nil {
			t.Fatal(err)
		}
		objs = append(objs, u)
	}
	return objs
}

// TestOverlaysApply builds every overlay and its databases and server-side
// applies the result to a real kube-apiserver with dry-run, under a field
// manager of its own as Flux would: all of it must be accepted.
func TestOverlaysApply(t *testing.T) {
	env := testenv.Start(t)
	ctx := context.Background()
	dirs := []string{"default", "samples", "samples/users", "overlays/dev/users"}
	for _, e := range []string{"dev", "staging", "production"} {
		dirs = append(dirs, filepath.Join("overlays", e), filepath.Join("overlays", e, "databases"))
	}
	for _, dir := range dirs {
		t.Run(dir, func(t *testing.T) {
			objs := build(t, dir)
			if len(objs) == 0 {
				t.Fatal("the build is empty")
			}
			// A namespace must exist for the dry-run of what it holds:
			// namespaces are applied for real, first.
			isNamespace := func(u *unstructured.Unstructured) int {
				if u.GetKind() == "Namespace" {
					return 0
				}
				return 1
			}
			slices.SortStableFunc(objs, func(a, b *unstructured.Unstructured) int { return cmp.Compare(isNamespace(a), isNamespace(b)) })
			for _, obj := range objs {
				opts := []client.ApplyOption{client.FieldOwner("kustomize-controller"), client.ForceOwnership}
				if obj.GetKind() != "Namespace" {
					opts = append(opts, client.DryRunAll)
				}
				if err := env.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj), opts...); err != nil {
					t.Errorf("apply %s %s: %v", obj.GetKind(), obj.GetName(), err)
				}
			}
		})
	}
	t.Run("production runs two managers with leader election", func(t *testing.T) {
		for _, obj := range build(t, "overlays/production") {
			if obj.GetKind() != "Deployment" {
				continue
			}
			replicas, _, _ := unstructured.NestedInt64(obj.Object, "spec", "replicas")
			containers, _, _ := unstructured.NestedSlice(obj.Object, "spec", "template", "spec", "containers")
			args, _, _ := unstructured.NestedStringSlice(containers[0].(map[string]any), "args")
			if replicas != 2 || !strings.Contains(strings.Join(args, " "), "--leader-elect") {
				t.Errorf("production manager: replicas=%d args=%v, want 2 replicas with --leader-elect", replicas, args)
			}
		}
	})
}

// TestGitOpsPaths checks that every path the Flux Kustomizations and the Argo
// CD ApplicationSets name builds.
func TestGitOpsPaths(t *testing.T) {
	files, _ := filepath.Glob("flux/*.yaml")
	files = append(files, "argocd/applicationsets.yaml")
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		objs, err := testenv.DecodeObjects(data)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, u := range objs {
			obj := u.Object
			path, found, _ := unstructured.NestedString(obj, "spec", "path")
			if !found {
				path, found, _ = unstructured.NestedString(obj, "spec", "template", "spec", "source", "path")
			}
			if !found {
				continue
			}
			envs := []string{""}
			if strings.Contains(path, "{{.env}}") {
				envs = generatorEnvs(u)
			}
			for _, e := range envs {
				p := strings.TrimPrefix(strings.TrimPrefix(strings.ReplaceAll(path, "{{.env}}", e), "./"), "kustomize/")
				if len(build(t, p)) == 0 {
					t.Errorf("%s %s: path %s builds nothing", f, u.GetName(), p)
				}
			}
		}
	}
}

// generatorEnvs returns the envs of an ApplicationSet's list generators.
func generatorEnvs(u *unstructured.Unstructured) []string {
	var envs []string
	generators, _, _ := unstructured.NestedSlice(u.Object, "spec", "generators")
	for _, g := range generators {
		elements, _, _ := unstructured.NestedSlice(g.(map[string]any), "list", "elements")
		for _, e := range elements {
			if env, ok := e.(map[string]any)["env"].(string); ok {
				envs = append(envs, env)
			}
		}
	}
	return envs
}

// TestFluxHealthChecksEveryObject checks that each Flux Kustomization with
// health checks names every object of the operator's kinds its path
// builds: a database, user or grant left out would never hold up a
// deployment.
func TestFluxHealthChecksEveryObject(t *testing.T) {
	files, _ := filepath.Glob("flux/*.yaml")
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		objs, err := testenv.DecodeObjects(data)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, u := range objs {
			checks, found, _ := unstructured.NestedSlice(u.Object, "spec", "healthChecks")
			if !found {
				continue
			}
			checked := map[string]bool{}
			for _, c := range checks {
				m := c.(map[string]any)
				checked[fmt.Sprintf("%s/%s/%s", m["kind"], m["namespace"], m["name"])] = true
			}
			path, _, _ := unstructured.NestedString(u.Object, "spec", "path")
			for _, o := range build(t, strings.TrimPrefix(path, "./kustomize/")) {
				if o.GroupVersionKind().Group != "database.example.com" {
					continue
				}
				if k := o.GetKind() + "/" + o.GetNamespace() + "/" + o.GetName(); !checked[k] {
					t.Errorf("%s %s: %s is not health-checked", f, u.GetName(), k)
				}
			}
		}
	}
}

// TestArgoHealthCoversEveryKind checks that kustomize/argocd registers the
// health check for every kind of the operator's CRDs.
func TestArgoHealthCoversEveryKind(t *testing.T) {
	var data map[string]any
	for _, o := range build(t, "argocd") {
		if o.GetKind() == "ConfigMap" && o.GetName() == "argocd-cm" {
			data, _, _ = unstructured.NestedMap(o.Object, "data")
		}
	}
	script, err := os.ReadFile("argocd/health.lua")
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range build(t, "crd") {
		group, _, _ := unstructured.NestedString(o.Object, "spec", "group")
		kind, _, _ := unstructured.NestedString(o.Object, "spec", "names", "kind")
		if got := data["resource.customizations.health."+group+"_"+kind]; got != string(script) {
			t.Errorf("argocd-cm has no health.lua for %s/%s", group, kind)
		}
	}
}

// argoHealth runs health.lua the way Argo CD does: obj is a global table.
func argoHealth(t *testing.T, script string, obj map[string]any) string {
	t.Helper()
	L := lua.NewState()
	defer L.Close()
	L.SetGlobal("obj", toLua(L, obj))
	if err := L.DoString("local function health() " + script + " end\nresult = health()"); err != nil {
		t.Fatalf("health.lua: %v", err)
	}
	res, ok := L.GetGlobal("result").(*lua.LTable)
	if !ok {
		t.Fatal("health.lua returned no table")
	}
	return res.RawGetString("status").String()
}

func toLua(L *lua.LState, v any) lua.LValue {
	switch v := v.(type) {
	case map[string]any:
		tbl := L.NewTable()
		for k, e := range v {
			tbl.RawSetString(k, toLua(L, e))
		}
		return tbl
	case []any:
		tbl := L.NewTable()
		for _, e := range v {
			tbl.Append(toLua(L, e))
		}
		return tbl
	case string:
		return lua.LString(v)
	case bool:
		return lua.LBool(v)
	case int64:
		return lua.LNumber(v)
	case float64:
		return lua.LNumber(v)
	case nil:
		return lua.LNil
	}
	return lua.LString(fmt.Sprint(v))
}

// TestArgoHealthMatchesKstatus runs Argo CD's health.lua and kstatus on the
// same fixtures: they must agree on every one.
func TestArgoHealthMatchesKstatus(t *testing.T) {
	script, err := os.ReadFile("argocd/health.lua")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"new.yaml":                       "Progressing",
		"reconciling.yaml":               "Progressing",
		"ready.yaml":                     "Healthy",
		"stalled.yaml":                   "Degraded",
		"generation-lag.yaml":            "Progressing",
		"stalled-at-old-generation.yaml": "Progressing",
		"deleting.yaml":                  "Progressing",
		"no-status.yaml":                 "Healthy",
		"database-ready.yaml":            "Healthy",
		"user-waiting.yaml":              "Progressing",
		"user-stalled.yaml":              "Degraded",
		"grant-new.yaml":                 "Progressing",
	}
	argoOf := map[status.Status]string{
		status.InProgressStatus:  "Progressing",
		status.TerminatingStatus: "Progressing",
		status.CurrentStatus:     "Healthy",
		status.FailedStatus:      "Degraded",
	}
	fixtures, _ := filepath.Glob("argocd/testdata/*.yaml")
	if len(fixtures) != len(want) {
		t.Fatalf("%d fixtures, %d expectations: keep them in step", len(fixtures), len(want))
	}
	for _, f := range fixtures {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			u := &unstructured.Unstructured{}
			if data, err = yaml.YAMLToJSON(data); err != nil {
				t.Fatal(err)
			}
			if err := u.UnmarshalJSON(data); err != nil {
				t.Fatal(err)
			}
			ks, err := status.Compute(u)
			if err != nil {
				t.Fatal(err)
			}
			argo := argoHealth(t, string(script), u.Object)
			if argo != argoOf[ks.Status] {
				t.Errorf("Argo CD says %s, kstatus says %s", argo, ks.Status)
			}
			if argo != want[filepath.Base(f)] {
				t.Errorf("Argo CD says %s, want %s", argo, want[filepath.Base(f)])
			}
		})
	}
}
