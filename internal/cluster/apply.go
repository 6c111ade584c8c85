package cluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/example/mysql-operator/internal/testenv"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
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

// waitCRDs waits until the API server serves every CRD: Established, and
// in the discovery the cluster's client maps kinds from. Established alone
// leaves a race: a client that maps a new kind just after may still get
// "unable to retrieve the complete list of server APIs" (a benchmark of
// 1000 failed so after its floor, at 4ce8035).
func (c *Cluster) waitCRDs(ctx context.Context) error {
	var waiting string
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		crds := &apiextensionsv1.CustomResourceDefinitionList{}
		if err := c.Client.List(ctx, crds); err != nil {
			return false, err
		}
		for _, crd := range crds.Items {
			if !established(&crd) {
				waiting = crd.Name + " not Established"
				return false, nil
			}
			gk := schema.GroupKind{Group: crd.Spec.Group, Kind: crd.Spec.Names.Kind}
			if _, err := c.Client.RESTMapper().RESTMapping(gk); err != nil {
				waiting = err.Error()
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil && waiting != "" {
		return fmt.Errorf("CRDs not served: %s: %w", waiting, err)
	}
	return err
}

// established says whether the API server serves a CRD.
func established(crd *apiextensionsv1.CustomResourceDefinition) bool {
	for _, cond := range crd.Status.Conditions {
		if cond.Type == apiextensionsv1.Established {
			return cond.Status == apiextensionsv1.ConditionTrue
		}
	}
	return false
}
