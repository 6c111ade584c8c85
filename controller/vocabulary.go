package controller

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// The words the operator writes where users read them: labels and
// annotations on its children, condition reasons in a MySQL's status, and
// the reasons of its events. Condition types are the API's
// (databasev1.ConditionReady, ConditionReconciling, ConditionStalled).

// FieldManager is the one server-side apply field manager of the operator.
const FieldManager = "mysql-operator"

// Tooling is the ApplySet tooling annotation value of the operator.
const Tooling = "mysql-operator/v1"

// Label keys the operator sets on its children.
const (
	// LabelName is the application name, "mysql".
	LabelName = "app.kubernetes.io/name"
	// LabelInstance is the name of the MySQL a child belongs to.
	LabelInstance = "app.kubernetes.io/instance"
	// LabelManagedBy marks children of the operator; the cache selects on it.
	LabelManagedBy = "app.kubernetes.io/managed-by"
	// LabelRole on a pod is "primary" or "replica", kept by the operator;
	// the Services select on it. An instance with no role carries none.
	LabelRole = "database.example.com/role"
)

// AnnotationConfigHash on the pod template holds the hash of my.cnf, so that
// a config change rolls the pods and nothing else does.
const AnnotationConfigHash = "database.example.com/config-hash"

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
	// ReasonDatabaseProgressing: the servers are being configured, or an
	// instance is not ready yet; the message names it.
	ReasonDatabaseProgressing = "DatabaseProgressing"
	// ReasonErrantTransactions: an instance has transactions the primary
	// never had; it is out of the Services and a human decides.
	ReasonErrantTransactions = "ErrantTransactions"
	// ReasonVolumeExpansionRejected: the API server refused to grow a data
	// volume, usually because its StorageClass does not allow expansion.
	ReasonVolumeExpansionRejected = "VolumeExpansionRejected"
)

// Event reasons the reconciler records on a MySQL.
const (
	// EventApplied: children were created, or their owned fields changed to
	// the desired state; one event per reconcile lists them all.
	EventApplied = "Applied"
	// EventPruned: children no longer desired were deleted; one event per
	// reconcile lists them.
	EventPruned = "Pruned"
	// EventStalled: the spec cannot be realised; see the Stalled condition.
	EventStalled = "Stalled"
	// EventVolumesExpanded: the data claims were grown to a new storageSize.
	EventVolumesExpanded = "VolumesExpanded"
	// EventTopology: the operator changed the servers' topology (a primary
	// made, replicas configured, a switchover, a failover, a seed).
	EventTopology = "Topology"
	// EventEndOfLife: the MySQL runs a version its vendor no longer supports.
	EventEndOfLife = "EndOfLife"
)

// eventActions is the action (what the operator did, as events.k8s.io asks)
// and type of each event reason.
var eventActions = map[string]struct{ action, eventType string }{
	EventApplied:         {"Apply", corev1.EventTypeNormal},
	EventPruned:          {"Prune", corev1.EventTypeNormal},
	EventStalled:         {"Reconcile", corev1.EventTypeWarning},
	EventVolumesExpanded: {"Expand", corev1.EventTypeNormal},
	EventTopology:        {"Configure", corev1.EventTypeNormal},
	EventEndOfLife:       {"Check", corev1.EventTypeWarning},
}

// eventf records an event of one of the reasons above on obj.
func (r *Reconciler) eventf(obj runtime.Object, reason, format string, args ...any) {
	a := eventActions[reason]
	r.Recorder.Eventf(obj, nil, a.eventType, reason, a.action, format, args...)
}
