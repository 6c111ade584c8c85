package mysql

import (
	"context"
	"crypto/sha256"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/applyset"
	"github.com/example/mysql-operator/controller/children"
	"github.com/example/mysql-operator/controller/dataplane"
)

// childrenView is what observeChildren reads of the children.
type childrenView struct {
	// waiting says which child is not current yet and why; empty when all are.
	waiting string
	// failed says which child reports a failure.
	failed string
	// selector is the pods' label selector, set once the children are observed.
	selector string
	// counted says the StatefulSet was read: replicas and readyReplicas
	// are its counts.
	counted                 bool
	replicas, readyReplicas int32
}

// observation is what a reconcile saw of the children.
type observation struct {
	// changed lists the children applied in this reconcile, as Kind/name.
	changed []string
	// awaiting says a child applied moments ago is not in the cache yet.
	awaiting bool
	// settledAt is the fingerprint the children are settled at in this
	// reconcile (see settledChildren), nil when they are not.
	settledAt *[sha256.Size]byte
	childrenView

	// pods are the MySQL's pods, by name.
	pods []corev1.Pod
	// podTrouble says which pod cannot run and why; podStalled that it has
	// been so long enough to need a spec change (see observePods).
	podTrouble, podStallReason string
	podStalled                 bool
	// claims are the unbound data claims of the pods that cannot be
	// scheduled, by pod name; storageWait says which pod waits for its
	// claim to be bound, while that is progress.
	claims      map[string]claimWait
	storageWait string
	// recheck is how soon to look again at a pod in trouble, zero for none.
	recheck time.Duration

	// db is what the data plane reported: the servers, the primary, the
	// step under way.
	db dataplane.Report
	// endOfLife says the version is no longer supported; empty when it is.
	endOfLife string
	// tls is the servers' TLS, nil while it is disabled.
	tls *tlsState
}

// observeChildren records in obs what readChildren reads of the children.
// When they are settled, the fingerprint covers the MySQL and every child
// by resourceVersion, so the view read at the same fingerprint is still
// true and is reused: an idle MySQL's periodic check converts and judges
// no child.
func (r *Reconciler) observeChildren(ctx context.Context, obj *databasev1.MySQL, obs *observation) error {
	key := client.ObjectKeyFromObject(obj)
	if obs.settledAt != nil {
		if v, ok := r.settled.view(key, *obs.settledAt); ok {
			obs.childrenView = v
			return nil
		}
	}
	if err := r.readChildren(ctx, obj, checkedChildren(obj), &obs.childrenView); err != nil {
		return err
	}
	if obs.settledAt != nil {
		r.settled.rememberView(key, *obs.settledAt, obs.childrenView)
	}
	return nil
}

// readChildren reads, from the cache, the kstatus of every member whose
// health decides the MySQL's readiness, in order, and records in v the
// first that is not current, or that failed, and the StatefulSet's replica
// counts. A child's status counts only once its controller has observed
// its generation: kstatus checks status.observedGeneration first.
func (r *Reconciler) readChildren(ctx context.Context, obj *databasev1.MySQL, checked []applyset.Member, v *childrenView) error {
	v.selector = labels.SelectorFromSet(children.SelectorLabels(obj)).String()
	for _, m := range checked {
		// Read only: live is the cache's own object.
		live := m.NewObject()
		if err := r.Client.Get(ctx, m.Key(), live, client.UnsafeDisableDeepCopy); err != nil {
			if apierrors.IsNotFound(err) {
				v.waiting = "waiting for " + m.Kind() + " " + m.Name() + " to be observed"
				return nil
			}
			return fmt.Errorf("get %s %s: %w", m.Kind(), m.Name(), err)
		}
		view := live
		if sts, ok := live.(*appsv1.StatefulSet); ok {
			v.counted, v.replicas, v.readyReplicas = true, sts.Status.Replicas, sts.Status.ReadyReplicas
			view = statusView(sts)
		}
		res, err := kstatusOf(r.Client.Scheme(), view)
		if err != nil {
			return err
		}
		switch res.Status {
		case status.CurrentStatus:
			continue
		case status.FailedStatus:
			v.failed = fmt.Sprintf("%s %s: %s", m.Kind(), m.Name(), res.Message)
		default:
			v.waiting = fmt.Sprintf("%s %s: %s", m.Kind(), m.Name(), res.Message)
		}
		return nil
	}
	return nil
}

// statusView returns a copy of sts without what kstatus never reads (pod
// and claim templates, labels, annotations, managedFields), so that the
// conversion kstatusOf makes costs a fraction of the whole object's. Its
// update strategy reads as RollingUpdate: the operator rolls the pods of
// its OnDelete StatefulSet itself, and kstatus calls any OnDelete
// StatefulSet Current, whatever revision its pods run.
func statusView(sts *appsv1.StatefulSet) *appsv1.StatefulSet {
	v := &appsv1.StatefulSet{Spec: sts.Spec, Status: sts.Status}
	v.Name, v.Namespace, v.Generation, v.DeletionTimestamp = sts.Name, sts.Namespace, sts.Generation, sts.DeletionTimestamp
	v.Spec.Template = corev1.PodTemplateSpec{}
	v.Spec.VolumeClaimTemplates = nil
	if v.Spec.UpdateStrategy.Type == appsv1.OnDeleteStatefulSetStrategyType {
		v.Spec.UpdateStrategy = appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType}
	}
	return v
}

// StatefulSetStatus is the kstatus of a StatefulSet as the operator reads
// it (see statusView): an OnDelete StatefulSet is Current once its pods are
// ready. The benchmark's floor uses it, for the same end point as the
// operator's.
func StatefulSetStatus(scheme *runtime.Scheme, sts *appsv1.StatefulSet) (*status.Result, error) {
	return kstatusOf(scheme, statusView(sts))
}

// kstatusOf computes the kstatus of a typed object, which it only reads:
// it may be the cache's own.
func kstatusOf(scheme *runtime.Scheme, obj client.Object) (*status.Result, error) {
	gvks, _, err := scheme.ObjectKinds(obj)
	if err != nil {
		return nil, err
	}
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: content}
	u.SetGroupVersionKind(gvks[0])
	return status.Compute(u)
}
