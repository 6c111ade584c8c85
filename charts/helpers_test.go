// Package charts_test tests the Helm chart in charts/mysql-operator with
// Helm's own Go SDK (helm.sh/helm/v4): its generated files match their
// kustomize sources, it lints, it renders what kustomize/default renders,
// values change what they should. Installing, upgrading and uninstalling it
// on the local cluster, with the manager running on the real node, is
// e2e/helm_test.go's.
package charts_test

import (
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/common"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	release "helm.sh/helm/v4/pkg/release/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/example/mysql-operator/internal/testenv"
)

// The chart and the release the tests install: the README's
// `helm install mysql-operator charts/mysql-operator -n mysql-operator-system`.
const (
	chartDir    = "mysql-operator"
	releaseName = "mysql-operator"
	namespace   = "mysql-operator-system"
	// manager is the Deployment's name, the same as kustomize/default's.
	manager = "mysql-operator-controller-manager"
)

// helmLogger sends Helm's warnings to the test binary's stderr.
var helmLogger = slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})

// loadChart loads the chart from its directory, as `helm install` does.
func loadChart(t *testing.T) *chart.Chart {
	t.Helper()
	ch, err := loader.Load(chartDir)
	if err != nil {
		t.Fatalf("load the chart: %v", err)
	}
	return ch
}

// render renders the chart with vals over its defaults, client-side and
// with the CRDs, as `helm template --include-crds` does; apiVersions are
// the API versions the cluster is said to serve beyond the built-in ones
// (`helm template --api-versions`).
func render(t *testing.T, vals map[string]any, apiVersions ...string) []*unstructured.Unstructured {
	t.Helper()
	rel, err := renderRelease(t, vals, apiVersions...)
	if err != nil {
		t.Fatalf("render the chart: %v", err)
	}
	objs, err := testenv.DecodeObjects([]byte(rel.Manifest))
	if err != nil {
		t.Fatalf("decode the rendered chart: %v", err)
	}
	return objs
}

// renderRelease renders the chart and returns the release or the error.
func renderRelease(t *testing.T, vals map[string]any, apiVersions ...string) (*release.Release, error) {
	t.Helper()
	install := action.NewInstall(action.NewConfiguration(action.ConfigurationSetLogger(helmLogger)))
	install.APIVersions = apiVersions
	install.DryRunStrategy = action.DryRunClient
	install.Replace = true
	install.IncludeCRDs = true
	install.ReleaseName = releaseName
	install.Namespace = namespace
	install.KubeVersion = kubeVersion(t)
	r, err := install.Run(loadChart(t), vals)
	if err != nil {
		return nil, err
	}
	rel, ok := r.(*release.Release)
	if !ok {
		t.Fatalf("the release is a %T", r)
	}
	return rel, nil
}

// kubeVersion is the version of the local cluster's kube-apiserver
// (K8S_VERSION in the Makefile), for rendering without a cluster: Helm's
// SDK would otherwise claim v1.20.
func kubeVersion(t *testing.T) *common.KubeVersion {
	t.Helper()
	v, err := common.ParseKubeVersion("v1.37.2")
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// kustomizeBuild builds a directory of kustomize/.
func kustomizeBuild(t *testing.T, dir string) []*unstructured.Unstructured {
	t.Helper()
	path := filepath.Join("..", "kustomize", dir)
	resources, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), path)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", path, err)
	}
	yml, err := resources.AsYaml()
	if err != nil {
		t.Fatalf("kustomize build %s: %v", path, err)
	}
	objs, err := testenv.DecodeObjects(yml)
	if err != nil {
		t.Fatalf("decode kustomize build %s: %v", path, err)
	}
	return objs
}

// readObjects decodes the objects of a file of the repository.
func readObjects(t *testing.T, path string) []*unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", path))
	if err != nil {
		t.Fatal(err)
	}
	objs, err := testenv.DecodeObjects(data)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return objs
}

// find returns the object of a kind and name among objs, or nil.
func find(objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	return nil
}

// mustFind is find that fails the test when the object is missing.
func mustFind(t *testing.T, objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	t.Helper()
	o := find(objs, kind, name)
	if o == nil {
		t.Fatalf("no %s %s", kind, name)
	}
	return o
}

// field returns the value at a path of an object (nil when absent).
func field(o *unstructured.Unstructured, path ...string) any {
	v, _, _ := unstructured.NestedFieldNoCopy(o.Object, path...)
	return v
}

// container returns the manager container of a Deployment.
func container(t *testing.T, deploy *unstructured.Unstructured) map[string]any {
	t.Helper()
	containers, _, _ := unstructured.NestedSlice(deploy.Object, "spec", "template", "spec", "containers")
	if len(containers) != 1 {
		t.Fatalf("Deployment %s has %d containers, want 1", deploy.GetName(), len(containers))
	}
	return containers[0].(map[string]any)
}

// args returns the manager container's args.
func args(t *testing.T, deploy *unstructured.Unstructured) []string {
	t.Helper()
	var out []string
	raw, _ := container(t, deploy)["args"].([]any)
	for _, a := range raw {
		out = append(out, a.(string))
	}
	return out
}
