package cluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/example/mysql-operator/internal/testenv"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// Build runs kustomize on dir, as Flux's kustomize-controller does, and
// returns the objects, namespaces and CRDs first.
func Build(dir string) ([]*unstructured.Unstructured, error) {
	resources, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		return nil, fmt.Errorf("kustomize build %s: %w", dir, err)
	}
	var first, rest []*unstructured.Unstructured
	for _, r := range resources.Resources() {
		data, err := r.MarshalJSON()
		if err != nil {
			return nil, err
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(data); err != nil {
			return nil, err
		}
		if k := u.GetKind(); k == "Namespace" || k == "CustomResourceDefinition" {
			first = append(first, u)
		} else {
			rest = append(rest, u)
		}
	}
	return append(first, rest...), nil
}

// Apply server-side applies objects with the given field manager, forcing
// ownership, as a GitOps tool does.
func Apply(ctx context.Context, c client.Client, fieldManager string, objs []*unstructured.Unstructured) error {
	for _, obj := range objs {
		if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj), client.FieldOwner(fieldManager), client.ForceOwnership); err != nil {
			return fmt.Errorf("apply %s %s: %w", obj.GetKind(), obj.GetName(), err)
		}
	}
	return nil
}

// applyFile applies every object of a YAML file as the cluster's admin.
func (c *Cluster) applyFile(ctx context.Context, path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	objs, err := testenv.DecodeObjects(data)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return Apply(ctx, c.Client, "local-cluster", objs)
}

// InstallOperator installs the operator the GitOps way: it builds
// kustomize/overlays/dev and server-side applies everything in it but the
// manager's Deployment under fieldManager. No container engine runs here,
// so the manager runs as a process (StartManager) under the Deployment's
// ServiceAccount identity instead.
func (c *Cluster) InstallOperator(ctx context.Context, repoRoot, fieldManager string) error {
	objs, err := Build(filepath.Join(repoRoot, "kustomize", "overlays", "dev"))
	if err != nil {
		return err
	}
	install := objs[:0]
	for _, o := range objs {
		if o.GetKind() != "Deployment" {
			install = append(install, o)
		}
	}
	if err := Apply(ctx, c.Client, fieldManager, install); err != nil {
		return err
	}
	return c.waitCRDs(ctx)
}
