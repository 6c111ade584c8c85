package charts_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/example/mysql-operator/internal/chartgen"
)

// TestGeneratedFilesMatchKustomize fails when the chart's CRDs or its RBAC
// template differ from what cmd/chartgen makes of kustomize/crd/bases and
// kustomize/rbac/role.yaml: edited by hand, or not regenerated after
// `controller-gen` ran. `make manifests` fixes it.
func TestGeneratedFilesMatchKustomize(t *testing.T) {
	root := ".."
	files, err := chartgen.Files(root)
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range files {
		got, err := os.ReadFile(filepath.Join(root, path))
		if err != nil {
			t.Errorf("%s: %v (run `make manifests`)", path, err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from what `make manifests` generates from kustomize/: run it", path)
		}
	}
	stale, err := chartgen.Stale(root, files)
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range stale {
		t.Errorf("%s has no source in %s: run `make manifests`", path, chartgen.CRDSourceDir)
	}
}

// TestChartMetadata checks Chart.yaml: apiVersion v2, version 0.1.0, and an
// appVersion that is the image tag kustomize/manager deploys, so the
// chart's default image is the kustomize base's.
func TestChartMetadata(t *testing.T) {
	ch := loadChart(t)
	m := ch.Metadata
	if m.APIVersion != "v2" || m.Name != "mysql-operator" || m.Version != "0.1.0" {
		t.Errorf("Chart.yaml: apiVersion %q name %q version %q, want v2 mysql-operator 0.1.0", m.APIVersion, m.Name, m.Version)
	}
	images := readObjects(t, "kustomize/manager/kustomization.yaml")[0].Object["images"].([]any)
	image := images[0].(map[string]any)
	if m.AppVersion != image["newTag"] {
		t.Errorf("appVersion %q, want kustomize/manager's image tag %q", m.AppVersion, image["newTag"])
	}
	deploy := mustFind(t, render(t, nil), "Deployment", manager)
	if got, want := container(t, deploy)["image"], image["newName"].(string)+":"+image["newTag"].(string); got != want {
		t.Errorf("default image %q, want kustomize's %q", got, want)
	}
}
