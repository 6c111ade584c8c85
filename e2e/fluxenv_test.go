package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"github.com/example/mysql-operator/internal/cluster"
	"github.com/example/mysql-operator/internal/gitserver"
)

// The Flux objects of kustomize/flux/dev.yaml and gitrepository.yaml.
const (
	fluxOperator  = "mysql-operator-dev"
	fluxDatabases = "mysql-databases-dev"
	fluxUsers     = "mysql-users-dev"
	fluxSource    = "mysql-operator"
)

var (
	kustomizationGVK = schema.GroupVersionKind{Group: "kustomize.toolkit.fluxcd.io", Version: "v1", Kind: "Kustomization"}
	gitRepositoryGVK = schema.GroupVersionKind{Group: "source.toolkit.fluxcd.io", Version: "v1", Kind: "GitRepository"}
)

// fluxEnv is Flux running against the shared cluster and syncing it from
// a git repository served on loopback, a copy of this repository's
// kustomize/ tree.
type fluxEnv struct {
	flux *cluster.Flux
	repo *gitserver.Repo
}

// startFluxEnv starts Flux's controllers and the git server, seeds the
// repository, and applies the Flux objects of the test overlay
// (e2e/testdata/flux) pointed at it. Cleanup deletes the Flux objects
// without pruning what the operator Kustomization applied (the CRD and
// RBAC the other tests rely on), then stops Flux and the git server.
func startFluxEnv(t *testing.T) *fluxEnv {
	t.Helper()
	ctx := context.Background()
	flux, err := c.StartFlux(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(flux.Stop)
	gitRoot := t.TempDir()
	srv, err := gitserver.Start(gitRoot)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.Close(); err != nil {
			t.Error(err)
		}
	})
	repo, err := srv.NewRepo(fluxSource, t.TempDir(), repoRoot, "kustomize")
	if err != nil {
		t.Fatal(err)
	}
	objs, err := fluxOverlay(t.TempDir(), repo.URL)
	if err != nil {
		t.Fatal(err)
	}
	if err := cluster.Apply(ctx, c.Client, "e2e", objs); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deleteFluxObjects(t) })
	return &fluxEnv{flux: flux, repo: repo}
}

// fluxOverlay builds, in dir, a kustomization of e2e/testdata/flux that
// adds two kustomize patches: the GitRepository's url, and the real
// node's placement of the MySQL (realNodeSpec) as a patch of the
// databases Kustomization, as an overlay for this cluster would.
func fluxOverlay(dir, url string) ([]*unstructured.Unstructured, error) {
	spec, err := runtime.DefaultUnstructuredConverter.ToUnstructured(ptr.To(realNodeSpec(1)))
	if err != nil {
		return nil, fmt.Errorf("real node spec: %w", err)
	}
	var ops []map[string]any
	for _, f := range []string{"image", "storageClassName", "storageSize", "nodeSelector", "tolerations"} {
		ops = append(ops, map[string]any{"op": "add", "path": "/spec/" + f, "value": spec[f]})
	}
	mysqlPatch, err := json.Marshal(ops)
	if err != nil {
		return nil, fmt.Errorf("real node patch: %w", err)
	}
	// kustomize takes no absolute path of a kustomization.
	base, err := filepath.Rel(dir, filepath.Join(repoRoot, "e2e", "testdata", "flux"))
	if err != nil {
		return nil, fmt.Errorf("test overlay: %w", err)
	}
	kustomization := map[string]any{
		"apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization",
		"resources": []string{base},
		"patches": []map[string]any{
			jsonPatch("GitRepository", fluxSource, map[string]any{"op": "replace", "path": "/spec/url", "value": url}),
			jsonPatch("Kustomization", fluxDatabases, map[string]any{"op": "add", "path": "/spec/patches", "value": []map[string]any{
				{"target": map[string]string{"kind": "MySQL", "name": "sample"}, "patch": string(mysqlPatch)}}}),
		},
	}
	data, err := yaml.Marshal(kustomization)
	if err != nil {
		return nil, fmt.Errorf("test overlay: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), data, 0o644); err != nil {
		return nil, fmt.Errorf("test overlay: %w", err)
	}
	opts := krusty.MakeDefaultOptions()
	opts.LoadRestrictions = types.LoadRestrictionsNone
	res, err := krusty.MakeKustomizer(opts).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		return nil, fmt.Errorf("kustomize build %s: %w", dir, err)
	}
	var objs []*unstructured.Unstructured
	for _, r := range res.Resources() {
		m, err := r.Map()
		if err != nil {
			return nil, fmt.Errorf("test overlay: %w", err)
		}
		objs = append(objs, &unstructured.Unstructured{Object: m})
	}
	return objs, nil
}

// jsonPatch is a kustomize patch entry of one JSON patch operation.
func jsonPatch(kind, name string, op map[string]any) map[string]any {
	data, _ := json.Marshal([]map[string]any{op}) // maps of plain values always marshal
	return map[string]any{"target": map[string]string{"kind": kind, "name": name}, "patch": string(data)}
}

// deleteFluxObjects deletes the Kustomizations and the GitRepository while
// Flux still runs: the databases and users ones prune what they applied;
// the operator one is first told not to prune, so that the CRD stays (its
// deletion would take every MySQL of the other tests with it). The
// Deployment it applied, scaled to 0, goes too.
func deleteFluxObjects(t *testing.T) {
	ctx := context.Background()
	op := kustomization(fluxOperator)
	patch := client.RawPatch(client.Merge.Type(), []byte(`{"spec":{"prune":false}}`))
	if err := c.Client.Patch(ctx, op, patch); client.IgnoreNotFound(err) != nil {
		t.Errorf("cleanup: %v", err)
	}
	objs := []client.Object{kustomization(fluxUsers), kustomization(fluxDatabases), op, gitRepository()}
	for _, o := range objs {
		if err := c.Client.Delete(ctx, o); client.IgnoreNotFound(err) != nil {
			t.Errorf("cleanup: delete %s: %v", o.GetName(), err)
		}
	}
	for _, o := range objs {
		err := pollFor(timeout, func(ctx context.Context) (bool, error) {
			err := c.Client.Get(ctx, client.ObjectKeyFromObject(o), o)
			return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
		})
		if err != nil {
			t.Errorf("cleanup: %s %s not gone: %v", o.GetObjectKind().GroupVersionKind().Kind, o.GetName(), err)
			return
		}
	}
	deploy := &appsv1.Deployment{}
	deploy.Name, deploy.Namespace = "mysql-operator-controller-manager", "mysql-operator-system"
	if err := c.Client.Delete(ctx, deploy); client.IgnoreNotFound(err) != nil {
		t.Errorf("cleanup: %v", err)
	}
}

// kustomization is an empty Flux Kustomization named name.
func kustomization(name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(kustomizationGVK)
	u.SetNamespace(cluster.FluxNamespace)
	u.SetName(name)
	return u
}

// gitRepository is an empty GitRepository of the test.
func gitRepository() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gitRepositoryGVK)
	u.SetNamespace(cluster.FluxNamespace)
	u.SetName(fluxSource)
	return u
}

// fluxStatus is what a test reads of a Kustomization's status.
type fluxStatus struct {
	Conditions []struct {
		Type, Status, Reason, Message string
	} `json:"conditions"`
	ObservedGeneration    int64  `json:"observedGeneration"`
	LastAppliedRevision   string `json:"lastAppliedRevision"`
	LastAttemptedRevision string `json:"lastAttemptedRevision"`
	Inventory             struct {
		Entries []struct {
			ID string `json:"id"`
		} `json:"entries"`
	} `json:"inventory"`
}

// ready returns the Ready condition's status, reason and message.
func (s *fluxStatus) ready() (status, reason, message string) {
	for _, cond := range s.Conditions {
		if cond.Type == "Ready" {
			return cond.Status, cond.Reason, cond.Message
		}
	}
	return "", "", ""
}

// readyAt says whether the Kustomization is Ready with commit applied.
func (s *fluxStatus) readyAt(commit string) bool {
	st, _, _ := s.ready()
	return st == "True" && strings.HasSuffix(s.LastAppliedRevision, commit)
}

// inventoryHas says whether the Kustomization's inventory lists the object id
// (namespace_name_group_kind).
func (s *fluxStatus) inventoryHas(id string) bool {
	for _, e := range s.Inventory.Entries {
		if e.ID == id {
			return true
		}
	}
	return false
}

// kustomizationStatus reads the status of the Kustomization name.
func kustomizationStatus(ctx context.Context, name string) (*fluxStatus, error) {
	u := kustomization(name)
	if err := c.Client.Get(ctx, client.ObjectKeyFromObject(u), u); err != nil {
		return nil, err
	}
	data, err := json.Marshal(u.Object["status"])
	if err != nil {
		return nil, err
	}
	s := &fluxStatus{}
	return s, json.Unmarshal(data, s)
}

// pollFor polls cond every 50ms until it returns true or an error, or
// within passes.
func pollFor(within time.Duration, cond func(ctx context.Context) (bool, error)) error {
	return wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, within, true, cond)
}

// waitReadyAt waits until the Kustomization name is Ready with commit
// applied, and fails with its last status after within.
func waitReadyAt(t *testing.T, name, commit string, within time.Duration) {
	t.Helper()
	var last *fluxStatus
	err := pollFor(within, func(ctx context.Context) (bool, error) {
		s, err := kustomizationStatus(ctx, name)
		last = s
		return err == nil && s.readyAt(commit), client.IgnoreNotFound(err)
	})
	if err != nil {
		t.Fatalf("Kustomization %s Ready at %.8s: %v (last status: %+v)", name, commit, err, last)
	}
}
