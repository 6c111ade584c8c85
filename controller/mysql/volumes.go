package mysql

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/controller/children"
	"github.com/example/mysql-operator/controller/outcome"
	"github.com/example/mysql-operator/controller/vocabulary"
)

// expansionRetry is how often a MySQL stalled on a refused expansion is
// tried again: the remedy, allowing expansion on the StorageClass, is not
// watched, and storageSize cannot go back down.
var expansionRetry = time.Minute

// +kubebuilder:rbac:groups="",resources=persistentvolumeclaims,verbs=get;patch

// expandVolumes grows the data volumes when storageSize grew. A
// StatefulSet's claim templates cannot change, so it patches every data
// claim the StatefulSet made to the new size, then deletes the StatefulSet
// and orphans its pods; applyChildren creates it again, with the new claim
// template, once the deletion is done, and it adopts the pods unchanged
// (their template did not change). When the API server refuses a claim's
// new size the MySQL stalls and the StatefulSet stays as it is.
func (r *Reconciler) expandVolumes(ctx context.Context, obj *databasev1.MySQL) error {
	// Every reconcile passes here: read the cache's own StatefulSet, not a
	// copy of it; it is only read.
	sts := &appsv1.StatefulSet{}
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: obj.Namespace, Name: children.StatefulSetName(obj)}, sts, client.UnsafeDisableDeepCopy); err != nil {
		return client.IgnoreNotFound(err)
	}
	if sts.DeletionTimestamp != nil {
		return nil
	}
	current, ok := claimSize(sts)
	want, err := resource.ParseQuantity(obj.Spec.StorageSize)
	if !ok || err != nil || current.Cmp(want) >= 0 {
		// A shrink cannot get past the CRD; an unparsable size neither.
		return nil
	}
	patch := client.RawPatch(types.MergePatchType, fmt.Appendf(nil, `{"spec":{"resources":{"requests":{"storage":%q}}}}`, want.String()))
	var grown []string
	for i := range children.MaxReplicas {
		// Claims are not cached: they are read, from the API server, only
		// when storageSize grows.
		pvc := &corev1.PersistentVolumeClaim{}
		key := types.NamespacedName{Namespace: obj.Namespace, Name: fmt.Sprintf("%s-%s-%d", children.DataVolume, sts.Name, i)}
		switch err := r.APIReader.Get(ctx, key, pvc); {
		case apierrors.IsNotFound(err):
			continue
		case err != nil:
			return fmt.Errorf("get PersistentVolumeClaim %s: %w", key.Name, err)
		case pvc.Status.Phase != corev1.ClaimBound:
			// Only a bound claim can grow; binding is a matter of time.
			return fmt.Errorf("PersistentVolumeClaim %s is %s: waiting for it to be bound to grow it", key.Name, pvc.Status.Phase)
		}
		switch err := r.Client.Patch(ctx, pvc, patch, client.FieldOwner(vocabulary.FieldManager)); {
		case apierrors.IsNotFound(err):
			continue
		case apierrors.IsInvalid(err) || apierrors.IsForbidden(err):
			stall := outcome.Stalled(vocabulary.ReasonVolumeExpansionRejected, "storageSize: cannot grow PersistentVolumeClaim %s to %s (its StorageClass must allow volume expansion; retried every %s): %v",
				pvc.Name, want.String(), expansionRetry, err)
			stall.Retry = expansionRetry
			return stall
		case err != nil:
			return fmt.Errorf("grow PersistentVolumeClaim %s: %w", pvc.Name, err)
		}
		grown = append(grown, pvc.Name)
	}
	orphan := metav1.DeletePropagationOrphan
	uid := sts.UID
	if err := r.Client.Delete(ctx, sts, &client.DeleteOptions{PropagationPolicy: &orphan, Preconditions: &metav1.Preconditions{UID: &uid}}); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("delete StatefulSet %s to change its claim template: %w", sts.Name, err)
	}
	ctrl.LoggerFrom(ctx).Info("expanded volumes", "from", current.String(), "to", want.String(), "claims", grown)
	vocabulary.Event(r.Recorder, obj, vocabulary.EventVolumesExpanded,
		"Grew %d data volumes from %s to %s; StatefulSet %s is re-created with the new claim template, its pods keep running", len(grown), current.String(), want.String(), sts.Name)
	return nil
}

// claimSize returns the storage request of the StatefulSet's data claim template.
func claimSize(sts *appsv1.StatefulSet) (resource.Quantity, bool) {
	for _, t := range sts.Spec.VolumeClaimTemplates {
		if t.Name == children.DataVolume {
			q, ok := t.Spec.Resources.Requests[corev1.ResourceStorage]
			return q, ok
		}
	}
	return resource.Quantity{}, false
}
