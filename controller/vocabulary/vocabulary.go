// Package vocabulary holds the words the operator writes where users read
// them: labels and annotations on its children, condition reasons in the
// statuses of MySQLs, databases, users and grants, the reasons and actions
// of its events, and its finalizer. Condition types are the API's
// (databasev1.ConditionReady, ConditionReconciling, ConditionStalled).
//
// Every controller package imports it; it imports none of them.
package vocabulary

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
)

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
	// LabelShard is Flux's sharding key: a manager started with
	// --watch-label-selector reconciles only the MySQLs (and databases,
	// users, grants) it selects, and caches only their children. The
	// operator copies it from a MySQL to its children and pods.
	LabelShard = "sharding.fluxcd.io/key"
	// LabelRole on a pod is "primary" or "replica", kept by the operator;
	// the Services select on it. An instance with no role carries none.
	LabelRole = "database.example.com/role"
)

// Values of LabelRole on the pods.
const (
	// RolePrimary marks the primary's pod; the client and primary Services select it.
	RolePrimary = "primary"
	// RoleReplica marks a ready replica's pod; the replicas Service selects it.
	RoleReplica = "replica"
)

// AnnotationConfigHash on the pod template holds the hash of my.cnf, so that
// a config change rolls the pods and nothing else does.
const AnnotationConfigHash = "database.example.com/config-hash"

// AnnotationTLS on the pod template is "on" when the pods mount the
// servers' certificate: the data plane replicates over TLS once every
// pod has it.
const AnnotationTLS = "database.example.com/tls"

// AnnotationRotateCA on a MySQL asks for a rotation of the operator's CA:
// any value the operator has not acted on yet starts one. On <name>-ca it
// records the last value acted on.
const AnnotationRotateCA = "database.example.com/rotate-ca"

// AnnotationSwitchover on a MySQL asks for a one-shot switchover:
// "<pod>@<RFC 3339 time>"; status.switchover answers it.
const AnnotationSwitchover = "database.example.com/switchover"

// AnnotationTLSSource on <name>-tls says which version of tls.secretName's
// Secret it is a copy of: "<uid>/<resourceVersion>".
const AnnotationTLSSource = "database.example.com/tls-source"

// Where a MySQL's certificate comes from, as status.tls.source says.
const (
	// TLSSourceOperator: the MySQL's own CA, made by the operator.
	TLSSourceOperator = "Operator"
	// TLSSourceSecret: tls.secretName, a Secret of the MySQL's owner.
	TLSSourceSecret = "Secret"
	// TLSSourceCertManager: tls.certManager, cert-manager's Certificate.
	TLSSourceCertManager = "CertManager"
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
	// ReasonCertificatePending: cert-manager has not issued the servers'
	// certificate yet; the pods wait for it.
	ReasonCertificatePending = "CertificatePending"
	// ReasonChildFailed: a child reports that it failed.
	ReasonChildFailed = "ChildFailed"
	// ReasonDatabaseProgressing: the servers are being configured, or an
	// instance is not ready yet; the message names it.
	ReasonDatabaseProgressing = "DatabaseProgressing"
	// ReasonErrantTransactions: an instance has transactions the primary
	// never had; it is out of the Services and a human decides.
	ReasonErrantTransactions = "ErrantTransactions"
	// ReasonPrimaryUnreachable: the primary does not answer; the message
	// says when the operator fails over.
	ReasonPrimaryUnreachable = "PrimaryUnreachable"
	// ReasonFailoverBlocked: the primary is lost past its failover grace,
	// and no replica can be promoted without risking an acknowledged
	// write; the message says why (too few replicas reachable, say). It
	// passes when the primary or enough replicas come back.
	ReasonFailoverBlocked = "FailoverBlocked"
	// ReasonVolumeExpansionRejected: the API server refused to grow a data
	// volume, usually because its StorageClass does not allow expansion.
	ReasonVolumeExpansionRejected = "VolumeExpansionRejected"
)

// Condition reasons of a pod that cannot run.
const (
	// ReasonPodUnschedulable: no node can take a pod.
	ReasonPodUnschedulable = "PodUnschedulable"
	// ReasonImagePullFailed: a pod's image cannot be pulled.
	ReasonImagePullFailed = "ImagePullFailed"
	// ReasonContainerFailing: a container cannot be created or keeps crashing.
	ReasonContainerFailing = "ContainerFailing"
	// ReasonStorageClassNotFound: a pod's data claim names a StorageClass
	// that does not exist.
	ReasonStorageClassNotFound = "StorageClassNotFound"
	// ReasonVolumeNotBound: a pod's data claim has not been bound for
	// the storage stall limit (10 minutes, or --stall-after if longer).
	ReasonVolumeNotBound = "VolumeNotBound"
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
	// EventCertificateExpiring: the servers' certificate, which its owner
	// renews (tls.secretName), is past two thirds of its life.
	EventCertificateExpiring = "CertificateExpiring"
)

// eventActions is the action (what the operator did, as events.k8s.io asks)
// and type of each event reason.
var eventActions = map[string]struct{ action, eventType string }{
	EventApplied:             {"Apply", corev1.EventTypeNormal},
	EventPruned:              {"Prune", corev1.EventTypeNormal},
	EventStalled:             {"Reconcile", corev1.EventTypeWarning},
	EventVolumesExpanded:     {"Expand", corev1.EventTypeNormal},
	EventTopology:            {"Configure", corev1.EventTypeNormal},
	EventEndOfLife:           {"Check", corev1.EventTypeWarning},
	EventCertificateExpiring: {"Check", corev1.EventTypeWarning},
	EventDriftCorrected:      {"Patch", corev1.EventTypeWarning},
	EventBackupStarted:       {"Backup", corev1.EventTypeNormal},
	EventBackupComplete:      {"Backup", corev1.EventTypeNormal},
	EventBackupFailed:        {"Backup", corev1.EventTypeWarning},
	EventBackupVerified:      {"Verify", corev1.EventTypeNormal},
	EventBackupScheduled:     {"Schedule", corev1.EventTypeNormal},
	EventBackupExpired:       {"Expire", corev1.EventTypeNormal},
	EventFilesDeleted:        {"Delete", corev1.EventTypeNormal},
	EventArchivePruned:       {"Expire", corev1.EventTypeNormal},
	EventFilesKept:           {"Delete", corev1.EventTypeWarning},
	EventScheduleInvalid:     {"Schedule", corev1.EventTypeWarning},
}

// Event records on obj, through rec, an event of one of the MySQL's
// reasons above, with the action and type the reason has.
func Event(rec events.EventRecorder, obj runtime.Object, reason, format string, args ...any) {
	a := eventActions[reason]
	rec.Eventf(obj, nil, a.eventType, reason, a.action, format, args...)
}

// ---------------------------------------------------------------------------
// Databases, users and grants (MySQLDatabase, MySQLUser, MySQLGrant): the
// words of the SQL object reconcilers (package sqlobjects). They
// also use ReasonSucceeded, ReasonRetrying, ReasonSecretNotFound,
// ReasonSecretInvalid and EventStalled above.

// FinalizerSQLCleanup holds a database, user or grant whose deletion must
// change the server (drop the database or account, revoke the privileges).
// It is added only while there is something to clean up, and released
// without touching the server when the MySQL is gone or being deleted.
const FinalizerSQLCleanup = "database.example.com/sql-cleanup"

// Condition reasons of the SQL objects.
const (
	// ReasonMySQLNotFound: the MySQL named by mysqlRef does not exist (yet).
	ReasonMySQLNotFound = "MySQLNotFound"
	// ReasonMySQLNotReady: the MySQL has no ready, writable primary yet, or
	// is being deleted.
	ReasonMySQLNotReady = "MySQLNotReady"
	// ReasonUserNotFound: a grant's account does not exist on the primary yet.
	ReasonUserNotFound = "UserNotFound"
	// ReasonSQLRejected: the server (or the operator before it) refused the
	// spec as invalid; retrying cannot help.
	ReasonSQLRejected = "SQLRejected"
	// ReasonReservedAccount: the spec names an account the server or the
	// operator owns.
	ReasonReservedAccount = "ReservedAccount"
)

// Event reasons of the SQL objects.
const (
	// EventSQLChanged: the primary was changed to the spec: a database or
	// account created or altered, a password set, privileges granted or
	// revoked.
	EventSQLChanged = "Changed"
	// EventDriftCorrected: the primary differed from a spec already applied
	// (a manual REVOKE, DROP USER or ALTER); it was put back. Also recorded
	// on a MySQL whose child Service had a port renumbered by another
	// manager, removed so that the operator's own could be applied again.
	EventDriftCorrected = "DriftCorrected"
	// EventCleanedUp: the object was deleted and the primary changed
	// accordingly (database or account dropped, privileges revoked).
	EventCleanedUp = "CleanedUp"
	// EventCleanupSkipped: the object was deleted while its MySQL was gone
	// or being deleted; nothing was done on a server.
	EventCleanupSkipped = "CleanupSkipped"
)

// Event actions of the SQL objects: what was done on the primary. Events
// of one object, reason and action merge into a series, so each kind of
// statement keeps its own.
const (
	// ActionCreate: CREATE DATABASE or CREATE USER.
	ActionCreate = "Create"
	// ActionAlter: ALTER DATABASE or ALTER USER (attributes).
	ActionAlter = "Alter"
	// ActionSetPassword: ALTER USER with the password of the Secret.
	ActionSetPassword = "SetPassword"
	// ActionGrant: GRANT.
	ActionGrant = "Grant"
	// ActionRevoke: REVOKE.
	ActionRevoke = "Revoke"
	// ActionDrop: DROP DATABASE or DROP USER.
	ActionDrop = "Drop"
	// ActionCleanUp: the deletion of an object, with nothing to do on a server.
	ActionCleanUp = "CleanUp"
	// ActionReconcile: a reconcile that stalled.
	ActionReconcile = "Reconcile"
)

// ---------------------------------------------------------------------------
// Backups (MySQLBackup, and the schedule on a MySQL): the words of package
// controller/backup. They also use ReasonSucceeded, ReasonRetrying and
// ReasonMySQLNotFound above.

// FinalizerBackupFiles holds a MySQLBackup until its files in the storage
// are deleted.
const FinalizerBackupFiles = "database.example.com/backup-files"

// Labels of the MySQLBackups.
const (
	// LabelBackupOf names the MySQL a MySQLBackup is of.
	LabelBackupOf = "database.example.com/mysql"
	// LabelScheduled marks the MySQLBackups the schedule created, which
	// retention deletes; a backup made by hand is kept until deleted.
	LabelScheduled = "database.example.com/scheduled"
)

// Condition reasons of a MySQLBackup.
const (
	// ReasonBackupPending: waiting for an instance to take the backup on.
	ReasonBackupPending = "Pending"
	// ReasonBackupRunning: the agent streams the backup into the storage.
	ReasonBackupRunning = "Running"
	// ReasonNoBackupPolicy: the MySQL has no spec.backup.
	ReasonNoBackupPolicy = "NoBackupPolicy"
	// ReasonNoSource: no instance could take the backup in time.
	ReasonNoSource = "NoSourceInstance"
	// ReasonBackupFailed: the agent could not take the backup; the
	// message says why (the storage, the server, the program).
	ReasonBackupFailed = "BackupFailed"
	// ReasonVerifyFailed: the backup did not restore in its scratch pod.
	ReasonVerifyFailed = "VerifyFailed"
	// ReasonDeletingFiles: the backup is deleted, its files not yet.
	ReasonDeletingFiles = "DeletingFiles"
)

// Event reasons of the backups.
const (
	// EventBackupStarted: an agent started a backup.
	EventBackupStarted = "BackupStarted"
	// EventBackupComplete: a backup's manifest is stored.
	EventBackupComplete = "BackupComplete"
	// EventBackupVerified: a backup was restored in a scratch pod; the
	// message says how it went.
	EventBackupVerified = "BackupVerified"
	// EventBackupFailed: a backup failed.
	EventBackupFailed = "BackupFailed"
	// EventBackupScheduled: the schedule created a MySQLBackup.
	EventBackupScheduled = "BackupScheduled"
	// EventBackupExpired: retention deleted a MySQLBackup.
	EventBackupExpired = "BackupExpired"
	// EventArchivePruned: archived binary logs older than the oldest
	// backup kept were deleted.
	EventArchivePruned = "ArchivePruned"
	// EventFilesDeleted: a deleted backup's files were deleted.
	EventFilesDeleted = "FilesDeleted"
	// EventFilesKept: a deleted backup's files were kept, since the
	// credentials to delete them are gone.
	EventFilesKept = "FilesKept"
	// EventScheduleInvalid: spec.backup.schedule does not parse.
	EventScheduleInvalid = "ScheduleInvalid"
)
