// Package backup is what the agent and the operator share about backups:
// where each file lives in the bucket, the manifest that makes a backup
// complete, the index of each archived binary log, the scan of a binary
// log that makes that index, the plan of a restore to a point in time
// (pure functions, no I/O), and the reading and writing of the bucket's
// small files (bucket.go). No SQL, no Kubernetes.
//
// The bucket, under the storage's prefix, holds one MySQL's history:
//
//	cluster.json                          the owner: a second MySQL is refused
//	backups/<name>/backup.xbstream.zst    mariadb-backup's stream, zstd-compressed
//	backups/<name>/manifest.json          written last: the backup is complete
//	binlogs/<tenure>/<file>.zst           an archived binary log, compressed
//	binlogs/<tenure>/<file>.json          its index, written after it
//
// A tenure is one instance's time as the primary, named by when it began
// and the instance (20261206T101500Z-db-0), so that the files of two
// primaries never overwrite each other and sort in the order they began.
package backup

import (
	"encoding/json"
	"fmt"
	"path"
	"strings"
	"time"
)

// Keys and names in the bucket, under the storage's prefix.
const (
	// OwnerKey names the MySQL whose history the prefix holds.
	OwnerKey = "cluster.json"
	// BackupsDir holds one directory per backup.
	BackupsDir = "backups/"
	// BinlogsDir holds one directory per tenure.
	BinlogsDir = "binlogs/"
	// DataFile is a backup's compressed stream.
	DataFile = "backup.xbstream.zst"
	// ManifestFile is a backup's manifest, written last.
	ManifestFile = "manifest.json"
)

// DataKey is the key of backup name's stream.
func DataKey(name string) string { return BackupsDir + name + "/" + DataFile }

// ManifestKey is the key of backup name's manifest.
func ManifestKey(name string) string { return BackupsDir + name + "/" + ManifestFile }

// SegmentDataKey is the key of an archived binary log file.
func SegmentDataKey(tenure, file string) string { return BinlogsDir + tenure + "/" + file + ".zst" }

// SegmentIndexKey is the key of an archived binary log file's index.
func SegmentIndexKey(tenure, file string) string { return BinlogsDir + tenure + "/" + file + ".json" }

// TenureName names the tenure of instance as primary begun at t.
func TenureName(t time.Time, instance string) string {
	return t.UTC().Format("20060102T150405Z") + "-" + instance
}

// Owner is the MySQL whose history a prefix holds.
type Owner struct {
	// Namespace and Name are the MySQL's.
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// UID is the MySQL's UID: a MySQL deleted and created again is
	// another MySQL, whose history starts again elsewhere.
	UID string `json:"uid"`
}

// String is namespace/name (uid).
func (o Owner) String() string { return fmt.Sprintf("%s/%s (uid %s)", o.Namespace, o.Name, o.UID) }

// File is one object of a backup or of the archive, as written.
type File struct {
	// Name is its key under the prefix.
	Name string `json:"name"`
	// Size is its size in bytes, compressed.
	Size int64 `json:"size"`
	// SHA256 is the hex SHA-256 of its bytes as stored.
	SHA256 string `json:"sha256"`
}

// Manifest describes a complete backup. Its presence is what makes a
// backup complete: an upload cut off leaves none.
type Manifest struct {
	// Name is the backup's name (the MySQLBackup's).
	Name string `json:"name"`
	// Owner is the MySQL it was taken of.
	Owner Owner `json:"owner"`
	// Instance is the pod it was taken on.
	Instance string `json:"instance"`
	// ServerVersion is the server's version, as it reports it.
	ServerVersion string `json:"serverVersion"`
	// Tool is the program that took it, with its version.
	Tool string `json:"tool"`
	// Start and End are when it began and ended.
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
	// GTID is the position of its last transaction.
	GTID string `json:"gtid"`
	// BinlogState is the source's @@gtid_binlog_state read just before it
	// began, which a restored instance unites with GTID (dbop.SeedState).
	BinlogState string `json:"binlogState,omitempty"`
	// RawSize is the size of the stream before compression.
	RawSize int64 `json:"rawSize"`
	// Files are its objects and their checksums.
	Files []File `json:"files"`
}

// Size is the total size of the backup's objects.
func (m Manifest) Size() int64 {
	var n int64
	for _, f := range m.Files {
		n += f.Size
	}
	return n
}

// Segment is the index of one archived binary log file.
type Segment struct {
	// Tenure is the tenure it was archived in.
	Tenure string `json:"tenure"`
	// BinlogFile is the file's name on the server.
	BinlogFile string `json:"binlogFile"`
	// Start is the binlog state before its first transaction.
	Start string `json:"start"`
	// End is the binlog state after its last transaction.
	End string `json:"end"`
	// First is the time of its first transaction; zero without one.
	First time.Time `json:"first,omitzero"`
	// Last is the time of its last event (its rotation): every transaction
	// committed before Last on that primary is in it or an earlier file.
	Last time.Time `json:"last"`
	// Transactions is how many it holds.
	Transactions int `json:"transactions"`
	// RawSize is the file's size before compression.
	RawSize int64 `json:"rawSize"`
	// Object is the compressed file.
	Object File `json:"object"`
}

// HeadFile names a tenure's head: a Segment without an Object, which says
// that the primary's binary log held nothing beyond End at Last, so that a
// restore to a time after the last transaction knows nothing is missing.
const HeadFile = "head"

// IsHead says whether s is a tenure's head.
func (s Segment) IsHead() bool { return s.Object.Name == "" }

// ParseIndexKey splits the key of a segment's index into tenure and file;
// ok is false for any other key.
func ParseIndexKey(key string) (tenure, file string, ok bool) {
	rest, found := strings.CutPrefix(key, BinlogsDir)
	if !found || !strings.HasSuffix(rest, ".json") {
		return "", "", false
	}
	tenure, file = path.Split(strings.TrimSuffix(rest, ".json"))
	tenure = strings.TrimSuffix(tenure, "/")
	return tenure, file, tenure != "" && !strings.Contains(tenure, "/") && file != ""
}

// ParseManifestKey returns the backup whose manifest key is, ok false
// for any other key.
func ParseManifestKey(key string) (name string, ok bool) {
	rest, found := strings.CutPrefix(key, BackupsDir)
	if !found {
		return "", false
	}
	name, found = strings.CutSuffix(rest, "/"+ManifestFile)
	return name, found && name != "" && !strings.Contains(name, "/")
}

// Marshal is json.MarshalIndent for the bucket's small files.
func Marshal(v any) []byte {
	data, _ := json.MarshalIndent(v, "", "  ") // plain structs always marshal
	return append(data, '\n')
}
