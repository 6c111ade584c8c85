package controller

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1 "github.com/example/mysql-operator/api/v1"
)

// Condition reasons the reconciler sets.
const (
	// ReasonSucceeded: every child is current and ready.
	ReasonSucceeded = "Succeeded"
	// ReasonProgressing: children are being applied or are rolling out.
	ReasonProgressing = "Progressing"
	// ReasonRetrying: the last attempt failed with an error that may pass; it is retried.
	ReasonRetrying = "ProgressingWithRetry"
	// ReasonSecretNotFound: rootPasswordSecretRef names a Secret that does not exist.
	ReasonSecretNotFound = "SecretNotFound"
	// ReasonSecretInvalid: the password Secret lacks its key.
	ReasonSecretInvalid = "SecretInvalid"
	// ReasonApplyRejected: the API server rejected a child as invalid or forbidden.
	ReasonApplyRejected = "ApplyRejected"
	// ReasonChildFailed: a child reports that it failed.
	ReasonChildFailed = "ChildFailed"
)

// stallError is an error that retrying cannot fix: the spec, or something it
// names, has to change. The MySQL is marked Stalled and the children stay as
// they were.
type stallError struct {
	reason, message string
	// retry, when set, is how soon to try again anyway: the remedy lies
	// in an object the reconciler does not watch.
	retry time.Duration
}

func (e *stallError) Error() string { return e.message }

func stalled(reason, format string, args ...any) *stallError {
	return &stallError{reason: reason, message: fmt.Sprintf(format, args...)}
}

// retryAfter returns how soon a stalled reconcile asks to be tried again,
// zero for none.
func retryAfter(err error) time.Duration {
	var stall *stallError
	if errors.As(err, &stall) {
		return stall.retry
	}
	return 0
}

// observation is what a reconcile saw of the children.
type observation struct {
	// changed lists the children applied in this reconcile, as Kind/name.
	changed []string
	// waiting says which child is not current yet and why; empty when all are.
	waiting string
	// failed says which child reports a failure.
	failed string
	// awaiting says a child applied moments ago is not in the cache yet.
	awaiting bool
}

// observeStatefulSet copies the StatefulSet's replica counts into status and
// computes, by kstatus, whether the StatefulSet and the PodDisruptionBudget
// are current. A child's status counts only once its controller has observed
// its generation: kstatus checks status.observedGeneration first.
func (r *Reconciler) observeStatefulSet(ctx context.Context, obj *databasev1.MySQL, obs *observation) error {
	obj.Status.Selector = labels.SelectorFromSet(SelectorLabels(obj)).String()
	sts := &appsv1.StatefulSet{}
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: obj.Namespace, Name: StatefulSetName(obj)}, sts); err != nil {
		if apierrors.IsNotFound(err) {
			obs.waiting = "waiting for StatefulSet " + StatefulSetName(obj) + " to be observed"
			return nil
		}
		return fmt.Errorf("get StatefulSet %s: %w", StatefulSetName(obj), err)
	}
	obj.Status.Replicas = sts.Status.Replicas
	obj.Status.ReadyReplicas = sts.Status.ReadyReplicas
	children := []client.Object{statusView(sts)}
	if obj.Spec.Replicas > 1 {
		pdb := &policyv1.PodDisruptionBudget{}
		if err := r.Client.Get(ctx, types.NamespacedName{Namespace: obj.Namespace, Name: PodDisruptionBudgetName(obj)}, pdb); err != nil {
			if apierrors.IsNotFound(err) {
				obs.waiting = "waiting for PodDisruptionBudget " + PodDisruptionBudgetName(obj) + " to be observed"
				return nil
			}
			return fmt.Errorf("get PodDisruptionBudget %s: %w", PodDisruptionBudgetName(obj), err)
		}
		children = append(children, pdb)
	}
	for _, child := range children {
		res, err := kstatusOf(r.Client.Scheme(), child)
		if err != nil {
			return err
		}
		switch res.Status {
		case status.CurrentStatus:
			continue
		case status.FailedStatus:
			obs.failed = fmt.Sprintf("%s %s: %s", child.GetObjectKind().GroupVersionKind().Kind, child.GetName(), res.Message)
		default:
			obs.waiting = fmt.Sprintf("%s %s: %s", child.GetObjectKind().GroupVersionKind().Kind, child.GetName(), res.Message)
		}
		return nil
	}
	return nil
}

// statusView returns a copy of sts without what kstatus never reads (pod
// and claim templates, labels, annotations, managedFields), so that the
// conversion kstatusOf makes costs a fraction of the whole object's.
func statusView(sts *appsv1.StatefulSet) *appsv1.StatefulSet {
	v := &appsv1.StatefulSet{Spec: sts.Spec, Status: sts.Status}
	v.Name, v.Namespace, v.Generation, v.DeletionTimestamp = sts.Name, sts.Namespace, sts.Generation, sts.DeletionTimestamp
	v.Spec.Template = corev1.PodTemplateSpec{}
	v.Spec.VolumeClaimTemplates = nil
	return v
}

// kstatusOf computes the kstatus of a typed object.
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
	obj.GetObjectKind().SetGroupVersionKind(gvks[0])
	return status.Compute(u)
}

// patchStatus sets every owned condition, the phase and the message from the
// reconcile's outcome, and patches the status only when it changed, in one
// merge patch: fluxcd/pkg/runtime's patch helper would send the conditions
// and the rest of the status as two writes, and readers could see the first
// without the second.
// observedGeneration advances when the outcome is final for this generation
// (children applied, or stalled); a retried error leaves it behind, so that
// kstatus keeps reporting InProgress.
// A write that leaves the MySQL InProgress, as it was, is held back by the
// progress limiter; the returned duration is when to reconcile again so that
// it lands even if nothing else happens.
func (r *Reconciler) patchStatus(ctx context.Context, before, obj *databasev1.MySQL, obs *observation, reconcileErr error) (time.Duration, error) {
	var stall *stallError
	final := true
	switch {
	case errors.As(reconcileErr, &stall):
		// A stall already reported is not reported again when retried.
		if c := conditions.Get(before, databasev1.ConditionStalled); c == nil || c.Status != metav1.ConditionTrue || c.Reason != stall.reason || c.Message != stall.message {
			r.Recorder.Eventf(obj, nil, corev1.EventTypeWarning, EventStalled, "Reconcile", "%s: %s", stall.reason, stall.message)
			ctrl.LoggerFrom(ctx).Info("stalled", "reason", stall.reason, "message", stall.message)
		}
		conditions.MarkStalled(obj, stall.reason, "%s", stall.message)
		conditions.MarkFalse(obj, databasev1.ConditionReady, stall.reason, "%s", stall.message)
		conditions.Delete(obj, databasev1.ConditionReconciling)
		reconcileErr = nil
	case reconcileErr != nil:
		final = false
		conditions.MarkReconciling(obj, ReasonRetrying, "%s", reconcileErr.Error())
		conditions.MarkFalse(obj, databasev1.ConditionReady, ReasonRetrying, "%s", reconcileErr.Error())
		conditions.Delete(obj, databasev1.ConditionStalled)
	case obs.failed != "":
		conditions.MarkStalled(obj, ReasonChildFailed, "%s", obs.failed)
		conditions.MarkFalse(obj, databasev1.ConditionReady, ReasonChildFailed, "%s", obs.failed)
		conditions.Delete(obj, databasev1.ConditionReconciling)
	case len(obs.changed) > 0 || obs.waiting != "":
		// The message changes only with what status already shows, so that a
		// roll-out costs as few status writes as its replica counts do; what
		// was applied is in the events, what is awaited in the debug log.
		msg := fmt.Sprintf("Rolling out generation %d: %d/%d replicas ready", obj.Generation, obj.Status.ReadyReplicas, obj.Spec.Replicas)
		ctrl.LoggerFrom(ctx).V(1).Info("rolling out", "applied", obs.changed, "waiting", obs.waiting)
		conditions.MarkReconciling(obj, ReasonProgressing, "%s", msg)
		conditions.MarkFalse(obj, databasev1.ConditionReady, ReasonProgressing, "%s", msg)
		conditions.Delete(obj, databasev1.ConditionStalled)
	default:
		conditions.MarkTrue(obj, databasev1.ConditionReady, ReasonSucceeded, "%d/%d replicas ready", obj.Status.ReadyReplicas, obj.Spec.Replicas)
		conditions.Delete(obj, databasev1.ConditionReconciling)
		conditions.Delete(obj, databasev1.ConditionStalled)
	}
	switch {
	case conditions.IsReady(obj):
		obj.Status.Phase = databasev1.PhaseRunning
	case conditions.IsStalled(obj):
		obj.Status.Phase = databasev1.PhaseFailed
	default:
		obj.Status.Phase = databasev1.PhasePending
	}
	obj.Status.Message = conditions.GetMessage(obj, databasev1.ConditionReady)

	if final {
		obj.Status.ObservedGeneration = obj.Generation
	}
	key := client.ObjectKeyFromObject(obj)
	if equality.Semantic.DeepEqual(before.Status, obj.Status) {
		if !inProgress(obj) {
			r.progress.forget(key)
		}
		return 0, reconcileErr
	}
	if r.written.unseen(before, &obj.Status) {
		return 0, reconcileErr
	}
	if inProgress(before) && inProgress(obj) {
		if wait := r.progress.hold(key); wait > 0 {
			ctrl.LoggerFrom(ctx).V(1).Info("status write held back", "after", wait)
			return wait, reconcileErr
		}
	}
	if err := r.Client.Status().Patch(ctx, obj, client.MergeFrom(before), client.FieldOwner(FieldManager)); err != nil {
		if apierrors.IsNotFound(err) {
			return 0, reconcileErr
		}
		return 0, errors.Join(reconcileErr, fmt.Errorf("patch MySQL status %s: %w", obj.Name, err))
	}
	r.written.record(obj)
	r.progress.wrote(key, inProgress(obj))
	return 0, reconcileErr
}
