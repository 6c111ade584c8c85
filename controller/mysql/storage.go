package mysql

import (
	"context"
	"fmt"
	"time"

	"github.com/example/mysql-operator/controller/children"
	"github.com/example/mysql-operator/controller/vocabulary"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// StorageStallAfter is how long a pod may wait for its data claim to be
// bound before its MySQL is Stalled, when --stall-after is shorter. A
// provisioner that works through many claims (a cluster creating hundreds
// of databases at once) takes minutes; that is progress, not a fault.
const StorageStallAfter = 10 * time.Minute

// annSelectedNode is the annotation the scheduler sets on a claim whose
// StorageClass binds on first consumer once it picked the pod's node.
const annSelectedNode = "volume.kubernetes.io/selected-node"

// +kubebuilder:rbac:groups=storage.k8s.io,resources=storageclasses,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=persistentvolumes,verbs=get

// claimWait is what is known of the data claim of a pod that cannot be
// scheduled.
type claimWait struct {
	// name is the claim's name, class its StorageClass (empty for none).
	name, class string
	// created is when the claim was made: its wait counts from then.
	created time.Time
	// classMissing says the claim names a StorageClass that does not exist.
	classMissing bool
	// forNode says the claim waits for its pod to be scheduled (its class
	// binds on first consumer and no node is picked yet): the pod's
	// scheduling, not storage, is what waits.
	forNode bool
	// bound, when set, says the claim is bound now, since then (its
	// volume's last phase change): the scheduler failed the pod while it
	// was unbound and has not tried again yet. The pod's trouble counts
	// from then, not from the scheduler's old verdict.
	bound time.Time
}

// trouble is why a pod cannot run, since when, and how long that may last
// before its MySQL is Stalled.
type trouble struct {
	reason, message string
	since           time.Time
	stallAfter      time.Duration
	// wait, when set, says the pod waits for storage: progress, not
	// trouble, until stallAfter.
	wait string
	// grace is how long the trouble lasts before the MySQL says so;
	// troubleGrace when zero.
	grace time.Duration
}

// observeClaims records in obs the data claims, unbound or bound, of the
// pods that cannot be scheduled, so that judgePods can tell a claim being
// bound, or just bound, from a pod no node takes. Claims and volumes are
// not cached: they are read, from the API server, only for such pods.
// StorageClasses are cached.
func (r *Reconciler) observeClaims(ctx context.Context, obs *observation) error {
	for i := range obs.pods {
		p := &obs.pods[i]
		if unschedulable(p) == nil {
			continue
		}
		w, ok, err := r.observeClaim(ctx, p)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		if obs.claims == nil {
			obs.claims = map[string]claimWait{}
		}
		obs.claims[p.Name] = w
	}
	return nil
}

// observeClaim reads the data claim of an unschedulable pod; ok is false
// when there is none, or it is bound since a time the volume does not say
// (the pod's own condition then tells).
func (r *Reconciler) observeClaim(ctx context.Context, p *corev1.Pod) (w claimWait, ok bool, err error) {
	pvc := &corev1.PersistentVolumeClaim{}
	key := types.NamespacedName{Namespace: p.Namespace, Name: children.DataVolume + "-" + p.Name}
	switch err := r.APIReader.Get(ctx, key, pvc); {
	case apierrors.IsNotFound(err):
		return w, false, nil
	case err != nil:
		return w, false, fmt.Errorf("get PersistentVolumeClaim %s: %w", key.Name, err)
	}
	w = claimWait{name: pvc.Name, class: ptr.Deref(pvc.Spec.StorageClassName, ""), created: pvc.CreationTimestamp.Time}
	switch pvc.Status.Phase {
	case corev1.ClaimPending:
		return w, true, r.observeClass(ctx, pvc, &w)
	case corev1.ClaimBound:
		err := r.observeBinding(ctx, pvc, &w)
		return w, !w.bound.IsZero(), err
	}
	return w, false, nil
}

// observeClass records in w whether the unbound claim's StorageClass is
// missing, or binds only once its pod has a node.
func (r *Reconciler) observeClass(ctx context.Context, pvc *corev1.PersistentVolumeClaim, w *claimWait) error {
	if w.class == "" {
		return nil
	}
	sc := &storagev1.StorageClass{}
	switch err := r.Client.Get(ctx, types.NamespacedName{Name: w.class}, sc); {
	case apierrors.IsNotFound(err):
		w.classMissing = true
	case err != nil:
		return fmt.Errorf("get StorageClass %s: %w", w.class, err)
	default:
		w.forNode = ptr.Deref(sc.VolumeBindingMode, storagev1.VolumeBindingImmediate) == storagev1.VolumeBindingWaitForFirstConsumer &&
			pvc.Annotations[annSelectedNode] == ""
	}
	return nil
}

// observeBinding records in w when the bound claim's volume was bound,
// read (uncached) from the PersistentVolume; w.bound stays zero when the
// volume does not say.
func (r *Reconciler) observeBinding(ctx context.Context, pvc *corev1.PersistentVolumeClaim, w *claimWait) error {
	pv := &corev1.PersistentVolume{}
	switch err := r.APIReader.Get(ctx, types.NamespacedName{Name: pvc.Spec.VolumeName}, pv); {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return fmt.Errorf("get PersistentVolume %s: %w", pvc.Spec.VolumeName, err)
	}
	if t := pv.Status.LastPhaseTransitionTime; t != nil {
		w.bound = t.Time
	}
	return nil
}

// storageTrouble returns the trouble of an unschedulable pod whose data
// claim is unbound: a StorageClass that does not exist is trouble like any
// other; a claim still being bound is a wait, for at least
// StorageStallAfter, named once it has lasted stallAfter: provisioning a
// disk takes tens of seconds in a cloud and minutes when a provisioner
// works through hundreds of claims, which is a roll-out's normal course.
func storageTrouble(pod string, w claimWait, stallAfter time.Duration) trouble {
	if w.classMissing {
		return trouble{reason: vocabulary.ReasonStorageClassNotFound, since: w.created, stallAfter: stallAfter,
			message: fmt.Sprintf("pod %s cannot be scheduled: its claim %s names StorageClass %s, which does not exist", pod, w.name, w.class)}
	}
	limit := max(stallAfter, StorageStallAfter)
	class := "no StorageClass: a PersistentVolume must be made for it"
	if w.class != "" {
		class = "StorageClass " + w.class
	}
	return trouble{reason: vocabulary.ReasonVolumeNotBound, since: w.created, stallAfter: limit, grace: stallAfter,
		wait:    fmt.Sprintf("pod %s waits for its claim %s to be bound (%s)", pod, w.name, class),
		message: fmt.Sprintf("pod %s cannot be scheduled: its claim %s has not been bound for %s (%s)", pod, w.name, limit, class)}
}
