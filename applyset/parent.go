package applyset

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// ApplyParent makes obj an ApplySet parent: it server-side applies the id
// label and the tooling and group-kinds annotations to obj's metadata, and
// nothing else, unless obj already carries them. It reports whether it wrote.
func (a Applier) ApplyParent(ctx context.Context, obj client.Object, annotations map[string]string) (bool, error) {
	gvk, err := apiutil.GVKForObject(obj, a.Client.Scheme())
	if err != nil {
		return false, err
	}
	p := Parent{Name: obj.GetName(), Namespace: obj.GetNamespace(), GroupKind: gvk.GroupKind()}
	labels := p.ParentLabels()
	if subset(labels, obj.GetLabels()) && subset(annotations, obj.GetAnnotations()) {
		return false, nil
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	u.SetName(obj.GetName())
	u.SetNamespace(obj.GetNamespace())
	u.SetLabels(labels)
	u.SetAnnotations(annotations)
	if err := a.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(a.FieldManager), client.ForceOwnership); err != nil {
		return false, fmt.Errorf("apply ApplySet parent %s %s: %w", gvk.Kind, obj.GetName(), err)
	}
	return true, nil
}

// subset reports whether every key of want is in have with the same value.
func subset(want, have map[string]string) bool {
	for k, v := range want {
		if hv, ok := have[k]; !ok || hv != v {
			return false
		}
	}
	return true
}
