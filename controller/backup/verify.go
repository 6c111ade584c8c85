package backup

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/controller/children"
	"github.com/example/mysql-operator/controller/vocabulary"
)

// verifyWait bounds how long a scratch pod may take, from its creation to
// its end, before the backup is marked unverified.
const verifyWait = 2 * time.Hour

// wantsVerify says whether b is a complete backup of a MySQL asking for
// verification that has no Verified condition yet.
func wantsVerify(b *databasev1.MySQLBackup, m *databasev1.MySQL) bool {
	return b.Status.Phase == databasev1.BackupComplete && m.Spec.Backup != nil && m.Spec.Backup.Verify &&
		conditions.Get(b, databasev1.ConditionVerified) == nil
}

// verify restores b in a scratch pod (children.VerifyPod) and records the
// pod's verdict, its termination message, in the Verified condition.
func (r *Reconciler) verify(ctx context.Context, b *databasev1.MySQLBackup, m *databasev1.MySQL) (ctrl.Result, error) {
	pod := &corev1.Pod{}
	err := r.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: children.VerifyPodName(b)}, pod)
	if apierrors.IsNotFound(err) {
		if err := r.Apply(ctx, children.VerifyPod(m, b, r.AgentImage), client.FieldOwner(vocabulary.FieldManager), client.ForceOwnership); err != nil {
			return ctrl.Result{}, fmt.Errorf("create the scratch pod of %s: %w", b.Name, err)
		}
		return ctrl.Result{RequeueAfter: waitRetry}, nil
	}
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("get the scratch pod of %s: %w", b.Name, err)
	}
	msg := terminationMessage(pod)
	switch {
	case pod.Status.Phase == corev1.PodSucceeded:
		conditions.MarkTrue(b, databasev1.ConditionVerified, vocabulary.ReasonSucceeded, "%s", msg)
	case pod.Status.Phase == corev1.PodFailed:
		conditions.MarkFalse(b, databasev1.ConditionVerified, vocabulary.ReasonVerifyFailed, "%s", msg)
	case time.Since(pod.CreationTimestamp.Time) > verifyWait:
		conditions.MarkFalse(b, databasev1.ConditionVerified, vocabulary.ReasonVerifyFailed,
			"the scratch pod %s did not finish in %s (phase %s)", pod.Name, verifyWait, pod.Status.Phase)
	default:
		return ctrl.Result{RequeueAfter: waitRetry}, nil
	}
	vocabulary.Event(r.Recorder, b, vocabulary.EventBackupVerified, "%s", conditions.GetMessage(b, databasev1.ConditionVerified))
	return ctrl.Result{}, client.IgnoreNotFound(r.Delete(ctx, pod))
}

// terminationMessage is what the scratch pod's container said at its end.
func terminationMessage(pod *corev1.Pod) string {
	for _, s := range pod.Status.ContainerStatuses {
		if t := s.State.Terminated; t != nil {
			if msg := strings.TrimSpace(t.Message); msg != "" {
				return msg
			}
			return fmt.Sprintf("the scratch pod's container exited %d (%s)", t.ExitCode, t.Reason)
		}
	}
	return "the scratch pod " + pod.Name + " ended without a word"
}
