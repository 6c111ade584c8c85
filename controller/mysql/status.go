package mysql

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fluxcd/pkg/runtime/conditions"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/controller/outcome"
	"github.com/example/mysql-operator/controller/vocabulary"
)

// judgeStatus returns the status a MySQL should have after a reconcile,
// from the status it had, what the reconcile observed and how it ended. It
// is pure: it reads obj and changes nothing.
//
// A stall is Stalled and Failed; another error is Reconciling with retry;
// a child that failed stalls the MySQL; children applied or not current
// yet are Reconciling; else the MySQL is Ready. observedGeneration advances
// when the outcome is final for this generation (children applied, or
// stalled); a retried error leaves it behind, so that kstatus keeps
// reporting InProgress.
func judgeStatus(obj *databasev1.MySQL, obs *observation, reconcileErr error) databasev1.MySQLStatus {
	out := &databasev1.MySQL{ObjectMeta: obj.ObjectMeta, Status: *obj.Status.DeepCopy()}
	recordObserved(out, obs)
	final := true
	switch stall := outcome.AsStall(reconcileErr); {
	case stall != nil:
		markStalled(out, stall.Reason, stall.Message)
	case reconcileErr != nil:
		final = false
		markReconciling(out, vocabulary.ReasonRetrying, reconcileErr.Error())
	case obs.failed != "":
		markStalled(out, vocabulary.ReasonChildFailed, obs.failed)
	case obs.podStalled:
		markStalled(out, obs.podStallReason, obs.podTrouble)
	case len(obs.db.Errant) > 0:
		markStalled(out, vocabulary.ReasonErrantTransactions, fmt.Sprintf("instances %s have transactions the primary never had: "+
			"they are out of the Services and are not repaired automatically", strings.Join(obs.db.Errant, ", ")))
	case obs.tls != nil && obs.tls.waiting != "":
		markReconciling(out, vocabulary.ReasonCertificatePending, obs.tls.waiting)
	case obs.podTrouble != "":
		markReconciling(out, obs.podStallReason, obs.podTrouble)
	case obs.db.Reason != "":
		// The primary unreachable, or lost with no safe failover: why
		// pods are not ready, whatever the children say.
		markReconciling(out, obs.db.Reason, obs.db.Waiting)
	case len(obs.changed) > 0 || obs.waiting != "":
		// What was applied is in the events, what is awaited in the debug
		// log; a pod waiting for storage, which can take minutes, is named.
		msg := fmt.Sprintf("Rolling out generation %d: %d/%d replicas ready", out.Generation, out.Status.ReadyReplicas, obj.Spec.Replicas)
		if obs.storageWait != "" {
			msg += "; " + obs.storageWait
		}

		markReconciling(out, vocabulary.ReasonProgressing, msg)
	case obs.db.Waiting != "":
		markReconciling(out, vocabulary.ReasonDatabaseProgressing, obs.db.Waiting)
	case obs.db.Observed && notReady(out) != "":
		markReconciling(out, vocabulary.ReasonDatabaseProgressing, notReady(out))
	default:
		conditions.MarkTrue(out, databasev1.ConditionReady, vocabulary.ReasonSucceeded, "%d/%d replicas ready, primary %s",
			out.Status.ReadyReplicas, obj.Spec.Replicas, out.Status.CurrentPrimary)
		conditions.Delete(out, databasev1.ConditionReconciling)
		conditions.Delete(out, databasev1.ConditionStalled)
	}
	markEndOfLife(out, obs.endOfLife)
	markExpiring(out, obs)
	out.Status.Phase = phaseOf(out)
	out.Status.Message = conditions.GetMessage(out, databasev1.ConditionReady)
	if final {
		out.Status.ObservedGeneration = out.Generation
	}
	return out.Status
}

// recordObserved copies into out's status what the reconcile observed:
// the pods' selector and counts, and the database's primary and instances.
// What of it moves all the time (GTIDs, lag, messages) is written only
// with another change, or a while after the last write: statusWriter
// decides (see sameShape).
func recordObserved(out *databasev1.MySQL, obs *observation) {
	if obs.selector != "" {
		out.Status.Selector = obs.selector
	}
	if obs.counted {
		out.Status.Replicas, out.Status.ReadyReplicas = obs.replicas, obs.readyReplicas
	}
	switch {
	case obs.tls != nil:
		out.Status.TLS = obs.tls.status
	case databasev1.TLSModeOf(out) == databasev1.TLSDisabled:
		out.Status.TLS = nil
	}
	if !obs.db.Observed {
		return
	}
	out.Status.CurrentPrimary = obs.db.Primary
	out.Status.Instances = slices.Clone(obs.db.Instances)
	if obs.db.Restore != nil {
		out.Status.Restore = obs.db.Restore
	}
	if obs.db.Switchover != nil {
		out.Status.Switchover = obs.db.Switchover
	}
	if obs.db.Failover != nil {
		out.Status.LastFailover = obs.db.Failover
	}
}

// notReady says which instance status shows not ready, and why; empty
// when every one is ready.
func notReady(m *databasev1.MySQL) string {
	for _, s := range m.Status.Instances {
		if !s.Ready {
			return fmt.Sprintf("instance %s: %s", s.Name, s.Message)
		}
	}
	return ""
}

// markEndOfLife sets the EndOfLife condition from its message, or deletes it.
func markEndOfLife(obj *databasev1.MySQL, message string) {
	if message == "" {
		conditions.Delete(obj, databasev1.ConditionEndOfLife)
		return
	}
	conditions.MarkTrue(obj, databasev1.ConditionEndOfLife, vocabulary.EventEndOfLife, "%s", message)
}

// markExpiring sets the CertificateExpiring condition from the TLS's
// observation, deletes it when the certificate is not expiring, and keeps
// it as it was when the TLS was not observed (a reconcile that failed
// before).
func markExpiring(obj *databasev1.MySQL, obs *observation) {
	switch {
	case obs.tls != nil && obs.tls.expiring != "":
		conditions.MarkTrue(obj, databasev1.ConditionCertificateExpiring, vocabulary.EventCertificateExpiring, "%s", obs.tls.expiring)
	case obs.tls != nil || databasev1.TLSModeOf(obj) == databasev1.TLSDisabled:
		conditions.Delete(obj, databasev1.ConditionCertificateExpiring)
	}
}

// markStalled marks obj Stalled and not Ready for reason.
func markStalled(obj *databasev1.MySQL, reason, message string) {
	conditions.MarkStalled(obj, reason, "%s", message)
	conditions.MarkFalse(obj, databasev1.ConditionReady, reason, "%s", message)
	conditions.Delete(obj, databasev1.ConditionReconciling)
}

// markReconciling marks obj Reconciling and not Ready for reason.
func markReconciling(obj *databasev1.MySQL, reason, message string) {
	conditions.MarkReconciling(obj, reason, "%s", message)
	conditions.MarkFalse(obj, databasev1.ConditionReady, reason, "%s", message)
	conditions.Delete(obj, databasev1.ConditionStalled)
}

// phaseOf summarises the conditions of obj in one word.
func phaseOf(obj *databasev1.MySQL) databasev1.Phase {
	switch {
	case conditions.IsReady(obj):
		return databasev1.PhaseRunning
	case conditions.IsStalled(obj):
		return databasev1.PhaseFailed
	default:
		return databasev1.PhasePending
	}
}

// inProgress says whether kstatus reads the MySQL's status as InProgress:
// its generation is not observed yet, or it is reconciling, and it has not
// stalled.
func inProgress(obj *databasev1.MySQL) bool {
	if conditions.IsStalled(obj) {
		return false
	}
	return obj.Status.ObservedGeneration < obj.Generation || conditions.IsReconciling(obj)
}
