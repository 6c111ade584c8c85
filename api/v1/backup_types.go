package v1

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// BackupSource is the instance a backup is taken on.
// +kubebuilder:validation:Enum=Replica;Primary
type BackupSource string

const (
	// BackupFromReplica takes a backup on a ready replica, so that the
	// primary is never loaded; a MySQL of one instance uses its primary.
	BackupFromReplica BackupSource = "Replica"
	// BackupFromPrimary takes a backup on the primary.
	BackupFromPrimary BackupSource = "Primary"
)

// BackupPolicy is how a MySQL is backed up: where, when, from which
// instance, how long backups are kept, and whether its binary logs are
// archived for a restore to a point in time.
type BackupPolicy struct {
	// schedule is when backups are taken: a cron expression of five fields,
	// in UTC ("0 3 * * *" is every day at 03:00). Empty takes backups on
	// demand only (a MySQLBackup created by hand).
	// +kubebuilder:validation:MaxLength=100
	// +kubebuilder:validation:XValidation:rule="self == '' || self.split(' ').filter(f, f != '').size() == 5",message="schedule: want a cron expression of five fields (minute hour day-of-month month day-of-week)"
	// +optional
	Schedule string `json:"schedule,omitempty"`

	// suspend stops the schedule; backups on demand still run.
	// +optional
	Suspend bool `json:"suspend,omitempty"`

	// storage is where the backups and the archived binary logs go.
	// +required
	Storage BackupStorage `json:"storage"`

	// retention says which complete backups are kept; the newest complete
	// backup is always kept. Unset keeps every backup.
	// +optional
	Retention *BackupRetention `json:"retention,omitempty"`

	// binlogArchive archives the primary's binary logs continuously, so that
	// a new MySQL can be restored to any point in time after a backup.
	// +optional
	BinlogArchive *BinlogArchive `json:"binlogArchive,omitempty"`

	// source is the instance a backup is taken on: a ready replica (the
	// default), so that the primary is never loaded, or the primary. On the
	// primary (and in a MySQL of one instance) commits wait while the backup
	// program ends, about 0.1 s under a heavy writer.
	// +kubebuilder:default=Replica
	// +optional
	Source BackupSource `json:"source,omitempty"`

	// rateLimit is the most bytes per second a backup reads from the data
	// directory ("100Mi"); unset is no limit.
	// +kubebuilder:validation:XValidation:rule="quantity(self).isGreaterThan(quantity('1Mi')) || quantity(self).compareTo(quantity('1Mi')) == 0",message="rateLimit: at least 1Mi per second"
	// +optional
	RateLimit *resource.Quantity `json:"rateLimit,omitempty"`

	// verify restores each backup in a scratch pod after it is taken: the
	// copy prepares, the server starts on it, and its GTID position is the
	// backup's. The MySQLBackup's Verified condition says how it went.
	// +optional
	Verify bool `json:"verify,omitempty"`
}

// BackupStorage is where backups are kept.
type BackupStorage struct {
	// s3 is a bucket of an S3-compatible service.
	// +required
	S3 S3Storage `json:"s3"`
}

// S3Storage is a prefix of an S3-compatible bucket. A prefix holds the
// history of one MySQL: a second MySQL is refused it.
type S3Storage struct {
	// endpoint is the service's URL: https://host[:port], or http:// for a
	// service without TLS.
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="self.matches('^https?://[^/?#]+/?$')",message="endpoint: want http(s)://host[:port]"
	// +required
	Endpoint string `json:"endpoint"`

	// bucket is the bucket, which must exist.
	// +kubebuilder:validation:MinLength=3
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9][a-z0-9.-]*[a-z0-9]$`
	// +required
	Bucket string `json:"bucket"`

	// prefix is the path under which this MySQL's files are kept, without
	// a leading or trailing slash; empty keeps them at the bucket's root.
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:XValidation:rule="!self.startsWith('/') && !self.endsWith('/') && !self.contains('//')",message="prefix: no leading, trailing or double slash"
	// +optional
	Prefix string `json:"prefix,omitempty"`

	// region is the bucket's region; empty asks the service.
	// +kubebuilder:validation:MaxLength=64
	// +optional
	Region string `json:"region,omitempty"`

	// pathStyle addresses the bucket as a path (host/bucket) rather than a
	// host name (bucket.host), as most services other than AWS need.
	// +optional
	PathStyle bool `json:"pathStyle,omitempty"`

	// credentialsSecretRef names a Secret in the MySQL's namespace with the
	// keys AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY.
	// +required
	CredentialsSecretRef LocalSecretReference `json:"credentialsSecretRef"`

	// caSecretRef names a Secret key holding the PEM bundle the service's
	// certificate must chain to, beside the system's roots.
	// +optional
	CASecretRef *CASecretReference `json:"caSecretRef,omitempty"`
}

// LocalSecretReference names a Secret in the same namespace.
type LocalSecretReference struct {
	// name is the Secret's name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	Name string `json:"name"`
}

// CASecretReference names a key of a Secret holding a CA bundle.
type CASecretReference struct {
	// name is the Secret's name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	Name string `json:"name"`

	// key is the key holding the PEM bundle.
	// +kubebuilder:default="ca.crt"
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Key string `json:"key,omitempty"`
}

// BackupRetention says which complete backups are kept. A backup goes when
// either rule lets it go; the newest complete backup never goes, and with
// it the archived binary logs after it.
// +kubebuilder:validation:XValidation:rule="has(self.count) || has(self.maxAge)",message="retention: set count, maxAge or both"
type BackupRetention struct {
	// count is how many complete backups are kept, the newest.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	// +optional
	Count *int32 `json:"count,omitempty"`

	// maxAge is how long a complete backup is kept ("720h").
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1h')",message="maxAge: at least 1h"
	// +optional
	MaxAge *metav1.Duration `json:"maxAge,omitempty"`
}

// BinlogArchive is the continuous archive of the primary's binary logs.
type BinlogArchive struct {
	// maxDelay bounds how long a committed transaction waits before it is
	// archived: the primary's binary log file is closed and copied when a
	// transaction in it has waited this long. From 5s to 1h.
	// +kubebuilder:default="60s"
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('5s') && duration(self) <= duration('1h')",message="maxDelay: from 5s to 1h"
	// +optional
	MaxDelay *metav1.Duration `json:"maxDelay,omitempty"`
}

// RestoreSpec makes a new MySQL from a backup: instance 0 restores it, and
// replays archived binary logs up to a point in time or a GTID; the other
// instances are seeded from instance 0. A restore is never done over a
// data volume that holds data.
// +kubebuilder:validation:XValidation:rule="!(has(self.pointInTime) && has(self.gtid))",message="restore: set pointInTime or gtid, not both"
type RestoreSpec struct {
	// storage is where the backups are: the storage of the MySQL they were
	// taken of, which may be gone.
	// +required
	Storage BackupStorage `json:"storage"`

	// backup is the name of the backup to restore. Empty picks the newest
	// complete backup that ends before pointInTime or gtid, or the newest.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Backup string `json:"backup,omitempty"`

	// pointInTime restores every transaction committed before it (RFC
	// 3339), replaying the archived binary logs after the backup. The
	// binary log keeps whole seconds: its fraction is dropped.
	// +optional
	PointInTime *metav1.Time `json:"pointInTime,omitempty"`

	// gtid restores every transaction up to and including it (MariaDB:
	// domain-server-sequence, as "0-1-1234").
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^[0-9]+-[0-9]+-[0-9]+$`
	// +optional
	GTID string `json:"gtid,omitempty"`
}

// RestoreStatus is what a restore reached.
type RestoreStatus struct {
	// backup is the backup restored.
	Backup string `json:"backup"`

	// gtid is the position the restore reached.
	// +optional
	GTID string `json:"gtid,omitempty"`

	// replayedBinlogs is how many archived binary log files were replayed.
	// +optional
	ReplayedBinlogs int32 `json:"replayedBinlogs,omitempty"`

	// completionTime is when instance 0's restore ended.
	CompletionTime metav1.Time `json:"completionTime"`
}
