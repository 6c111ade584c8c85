package backup

import (
	"time"

	"github.com/example/mysql-operator/objstore"
)

// Files the operator renders into a pod's storage directories, beside the
// credentials (objstore.AccessKeyIDFile and the rest).
const (
	// ConfigFile is the PodConfig of the MySQL's backups.
	ConfigFile = "backup.json"
	// RestoreFile is the RestoreConfig of a MySQL made from a backup.
	RestoreFile = "restore.json"
)

// PodConfig is what the agent needs of a MySQL's backup policy: where the
// files go, whose they are, how fast to read and how late the archive may
// be. The operator renders it from the spec into the MySQL's ConfigMap.
type PodConfig struct {
	// Storage is the bucket and prefix; the credentials come from files.
	Storage objstore.Config `json:"storage"`
	// Owner is the MySQL, which claims the prefix.
	Owner Owner `json:"owner"`
	// ArchiveMaxDelay bounds how long a committed transaction waits to be
	// archived; zero archives no binary log.
	ArchiveMaxDelay Duration `json:"archiveMaxDelay,omitempty"`
	// RateLimit is the most bytes per second a backup reads; zero is no limit.
	RateLimit int64 `json:"rateLimit,omitempty"`
}

// RestoreConfig is what instance 0 of a MySQL made from a backup restores.
type RestoreConfig struct {
	// Storage is where the backups and the archive are.
	Storage objstore.Config `json:"storage"`
	// Target is the backup and point to restore.
	Target Target `json:"target"`
	// Done says the MySQL's restore completed: an instance 0 that finds its
	// volume empty later is seeded from the primary, not restored again.
	Done bool `json:"done,omitempty"`
}

// Duration is a time.Duration written as Go prints one ("1m0s").
type Duration time.Duration

// MarshalText prints the duration.
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// UnmarshalText parses a duration.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	*d = Duration(v)
	return err
}
