package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MySQLBackupKind is the kind of the MySQLBackup resource.
const MySQLBackupKind = "MySQLBackup"

// BackupPhase is a one-word summary of a MySQLBackup's state.
// +kubebuilder:validation:Enum=Pending;Running;Complete;Failed
type BackupPhase string

// Phases of a backup.
const (
	// BackupPending: waiting for a source instance.
	BackupPending BackupPhase = "Pending"
	// BackupRunning: the agent streams the backup into the storage.
	BackupRunning BackupPhase = "Running"
	// BackupComplete: the backup and its manifest are stored.
	BackupComplete BackupPhase = "Complete"
	// BackupFailed: the backup cannot be taken; the Stalled condition says why.
	BackupFailed BackupPhase = "Failed"
)

// ConditionVerified is True when a backup was restored in a scratch pod
// and matched its manifest, False when that failed; kstatus ignores it.
const ConditionVerified = "Verified"

// MySQLBackupSpec is one backup of a MySQL.
type MySQLBackupSpec struct {
	// mysqlRef names the MySQL, in the same namespace, to back up; its
	// spec.backup gives the storage. It is immutable.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="mysqlRef: is immutable"
	// +required
	MySQLRef MySQLReference `json:"mysqlRef"`
}

// BackupFile is one stored file of a backup.
type BackupFile struct {
	// name is its key under the storage's prefix.
	Name string `json:"name"`
	// size is its size in bytes.
	Size int64 `json:"size"`
	// sha256 is the hex SHA-256 of its bytes, checked on restore.
	SHA256 string `json:"sha256"`
}

// MySQLBackupStatus is the observed state of a backup.
type MySQLBackupStatus struct {
	// observedGeneration is the generation last acted on.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// phase is Pending, Running, Complete or Failed.
	// +optional
	Phase BackupPhase `json:"phase,omitempty"`

	// instance is the pod the backup is taken on.
	// +optional
	Instance string `json:"instance,omitempty"`

	// startTime and completionTime bound the backup.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`

	// duration is how long it took, as "1m12s".
	// +optional
	Duration string `json:"duration,omitempty"`

	// size is the size of the stored files, as "1.2GiB"; sizeBytes in bytes.
	// +optional
	Size string `json:"size,omitempty"`
	// +optional
	SizeBytes int64 `json:"sizeBytes,omitempty"`

	// gtid is the position of the backup's last transaction.
	// +optional
	GTID string `json:"gtid,omitempty"`

	// location is the backup's directory, s3://bucket/prefix/backups/<name>/.
	// +optional
	Location string `json:"location,omitempty"`

	// storage is the storage the backup was written to, kept so that
	// deleting the backup deletes its files even when the MySQL changed or
	// is gone.
	// +optional
	Storage *BackupStorage `json:"storage,omitempty"`

	// files are the stored files and their checksums.
	// +listType=atomic
	// +optional
	Files []BackupFile `json:"files,omitempty"`

	// message is a human-readable summary.
	// +optional
	Message string `json:"message,omitempty"`

	// conditions are Ready, Reconciling and Stalled by the kstatus
	// conventions, and Verified when the backup was restored to check it.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// MySQLBackup is one backup of a MySQL to its storage, made by the MySQL's
// schedule or by hand. Deleting it deletes its files from the storage.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=mybk,categories=all
// +kubebuilder:printcolumn:name="MySQL",type=string,JSONPath=`.spec.mysqlRef.name`
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Instance",type=string,JSONPath=`.status.instance`
// +kubebuilder:printcolumn:name="Started",type=date,JSONPath=`.status.startTime`
// +kubebuilder:printcolumn:name="Duration",type=string,JSONPath=`.status.duration`
// +kubebuilder:printcolumn:name="Size",type=string,JSONPath=`.status.size`
// +kubebuilder:printcolumn:name="GTID",type=string,JSONPath=`.status.gtid`
// +kubebuilder:printcolumn:name="Verified",type=string,JSONPath=`.status.conditions[?(@.type=="Verified")].status`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type MySQLBackup struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec names the MySQL backed up.
	// +required
	Spec MySQLBackupSpec `json:"spec"`

	// status is the observed state of the backup.
	// +kubebuilder:default:={"observedGeneration":-1}
	// +optional
	Status MySQLBackupStatus `json:"status,omitempty"`
}

// GetConditions returns the status conditions, for fluxcd/pkg/runtime/conditions.
func (in *MySQLBackup) GetConditions() []metav1.Condition { return in.Status.Conditions }

// SetConditions sets the status conditions, for fluxcd/pkg/runtime/conditions.
func (in *MySQLBackup) SetConditions(c []metav1.Condition) { in.Status.Conditions = c }

// MySQLBackupList is a list of MySQLBackup.
// +kubebuilder:object:root=true
type MySQLBackupList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// items are the backups.
	Items []MySQLBackup `json:"items"`
}

// LastComplete returns, by "<namespace>/<MySQL name>", the backup of each
// MySQL that completed last.
func (in *MySQLBackupList) LastComplete() map[string]*MySQLBackup {
	last := map[string]*MySQLBackup{}
	for i := range in.Items {
		b := &in.Items[i]
		if b.Status.Phase != BackupComplete || b.Status.CompletionTime == nil {
			continue
		}
		k := b.Namespace + "/" + b.Spec.MySQLRef.Name
		if l := last[k]; l == nil || b.Status.CompletionTime.After(l.Status.CompletionTime.Time) {
			last[k] = b
		}
	}
	return last
}

func init() {
	SchemeBuilder.Register(&MySQLBackup{}, &MySQLBackupList{})
}
