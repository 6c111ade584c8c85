package agent

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/example/mysql-operator/backup"
	"github.com/example/mysql-operator/dbop"
	"github.com/example/mysql-operator/internal/dbtest"
	"github.com/example/mysql-operator/internal/workload"
	"github.com/example/mysql-operator/objstore"
	"github.com/example/mysql-operator/topology"
)

// TestBackupRestore backs up a real server under a writer into a real S3
// server, and restores it into a new data directory with a new MySQL's
// passwords: every row of the backup's GTID position is there, and nothing
// else.
func TestBackupRestore(t *testing.T) {
	ctx := context.Background()
	in := startInstance(t, "a")
	_, storage := startS3(t)
	in.withBackups(storage, 0)
	db := in.db()
	execSQL(t, db, "CREATE DATABASE shop", "CREATE TABLE shop.t (n INT PRIMARY KEY)")
	insertRows(t, db, 1, 100)
	w, err := workload.StartWriter(db)
	if err != nil {
		t.Fatal(err)
	}
	before := w.Count()
	var progress atomic.Int64
	m, err := in.c.takeBackup(ctx, "b1", &progress)
	w.Stop()
	if err != nil {
		t.Fatal(err)
	}
	if m.GTID == "" || len(m.Files) != 1 || m.Files[0].Size == 0 || m.RawSize <= m.Files[0].Size || m.Instance != "db-0" {
		t.Fatalf("manifest %+v", m)
	}
	again, err := in.c.takeBackup(ctx, "b1", &progress)
	if err != nil || again.Files[0].SHA256 != m.Files[0].SHA256 || !again.End.Equal(m.End) {
		t.Fatalf("a complete backup asked again: %+v, %v; want the same manifest", again, err)
	}

	if msg, err := verifyIn(t, in, "b1"); err != nil || !strings.Contains(msg, "started at GTID "+m.GTID) {
		t.Errorf("verify: %q, %v", msg, err)
	}
	restored, pw, err := restoreInto(t, storage, backup.Target{}, in.server)
	if err != nil {
		t.Fatal(err)
	}
	rdb := openDB(t, restored, dbop.AdminUser, pw.AdminPassword)
	if got := scalar(t, rdb, "SELECT @@gtid_binlog_pos"); got != position(t, m.GTID) {
		t.Errorf("restored at %s, the backup is at %s", got, m.GTID)
	}
	if n := scalar(t, rdb, "SELECT COUNT(*) FROM shop.t"); n != "100" {
		t.Errorf("shop.t has %s rows, want 100", n)
	}
	// The writer's rows form a prefix 1..k, k at least what was
	// acknowledged before the backup began.
	k := scalar(t, rdb, "SELECT COUNT(*) FROM shop.log")
	if max := scalar(t, rdb, "SELECT COALESCE(MAX(n), 0) FROM shop.log"); max != k || atoi(t, k) < before {
		t.Errorf("shop.log holds %s rows up to %s; %d were acknowledged before the backup", k, max, before)
	}
	// The backup's source passwords are gone: this MySQL's work.
	if err := openDB(t, restored, dbop.AdminUser, in.pw.AdminPassword).Ping(); err == nil {
		t.Error("the source's admin password logs in to the restored server")
	}
}

// verifyIn verifies backup name as a scratch pod would: an empty data
// directory, the MySQL's storage.
func verifyIn(t *testing.T, in *instance, name string) (string, error) {
	dir := t.TempDir()
	c := Config{DataDir: filepath.Join(dir, "data"), Socket: filepath.Join(dir, "mysqld.sock"),
		ServerConfig: filepath.Join(in.server.Dir, "my.cnf"), BackupDir: in.c.BackupDir}
	return c.Verify(context.Background(), name, dbtest.Binary(t, "mariadbd"))
}

// TestBackupRefusesAnotherOwner: a prefix holds one MySQL's history.
func TestBackupRefusesAnotherOwner(t *testing.T) {
	in := startInstance(t, "b")
	_, storage := startS3(t)
	if err := backup.PutJSON(context.Background(), newStore(t, storage), backup.OwnerKey,
		backup.Owner{Namespace: "other", Name: "db", UID: "uid-2"}); err != nil {
		t.Fatal(err)
	}
	in.withBackups(storage, 0)
	var progress atomic.Int64
	_, err := in.c.takeBackup(context.Background(), "b1", &progress)
	if err == nil || !strings.Contains(err.Error(), "holds the backups of MySQL other/db (uid uid-2)") {
		t.Fatalf("backup into another MySQL's prefix: %v", err)
	}
}

// TestRestoreRefusesDamage: a corrupt or missing file, or a backup that is
// not there, fails the restore with the file's name, and leaves no data
// directory.
func TestRestoreRefusesDamage(t *testing.T) {
	ctx := context.Background()
	in := startInstance(t, "c")
	s3, storage := startS3(t)
	in.withBackups(storage, 0)
	execSQL(t, in.db(), "CREATE DATABASE shop")
	var progress atomic.Int64
	m, err := in.c.takeBackup(ctx, "b1", &progress)
	if err != nil {
		t.Fatal(err)
	}
	object := filepath.Join(s3.Dir, storage.Bucket, storage.Prefix, m.Files[0].Name)
	data, err := os.ReadFile(object)
	if err != nil {
		t.Fatal(err)
	}
	if err := restoreIntoErr(t, storage, backup.Target{Backup: "b2"}, in); err == nil || !strings.Contains(err.Error(), `no complete backup named "b2"`) {
		t.Errorf("a backup that is not there: %v", err)
	}
	data[len(data)/2] ^= 0xff
	if err := os.WriteFile(object, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := restoreIntoErr(t, storage, backup.Target{}, in); err == nil ||
		!strings.Contains(err.Error(), "backups/b1/backup.xbstream.zst is corrupt") {
		t.Errorf("a corrupt stream: %v", err)
	}
	if _, err := verifyIn(t, in, "b1"); err == nil || !strings.Contains(err.Error(), "is corrupt") {
		t.Errorf("verify of a corrupt stream: %v", err)
	}
	if err := os.Remove(object); err != nil {
		t.Fatal(err)
	}
	if err := restoreIntoErr(t, storage, backup.Target{}, in); err == nil ||
		!strings.Contains(err.Error(), "download backups/b1/backup.xbstream.zst: no such object") {
		t.Errorf("a missing stream: %v", err)
	}
}

// restoreIntoErr is restoreInto for a restore that must fail.
func restoreIntoErr(t *testing.T, storage objstore.Config, target backup.Target, in *instance) error {
	_, _, err := restoreInto(t, storage, target, in.server)
	return err
}

// TestArchivePointInTime archives a primary's binary log while rows are
// written and a table dropped, and restores to the second before the drop
// and to a GTID: every row before it, nothing after.
func TestArchivePointInTime(t *testing.T) {
	ctx := context.Background()
	in := startInstance(t, "d")
	_, storage := startS3(t)
	in.withBackups(storage, time.Second)
	db := in.db()
	execSQL(t, db, "SET GLOBAL read_only = OFF", "CREATE DATABASE shop", "CREATE TABLE shop.t (n INT PRIMARY KEY)")
	insertRows(t, db, 1, 20)
	var progress atomic.Int64
	if _, err := in.c.takeBackup(ctx, "b1", &progress); err != nil {
		t.Fatal(err)
	}
	insertRows(t, db, 21, 40)
	at40 := scalar(t, db, "SELECT @@gtid_binlog_pos")
	insertRows(t, db, 41, 60)
	drop := nextSecond(t)
	execSQL(t, db, "DROP TABLE shop.t", "CREATE TABLE shop.later (n INT)")

	a := &archiver{c: in.c, log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	cfg, err := in.c.loadBackupConfig()
	if err != nil {
		t.Fatal(err)
	}
	want := canonical(t, scalar(t, db, "SELECT @@gtid_binlog_state"))
	deadline := time.Now().Add(30 * time.Second)
	for a.status().Position != want {
		if err := a.round(ctx, cfg); err != nil {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the archive is at %q, the server at %q", a.status().Position, want)
		}
	}

	restored, pw, err := restoreInto(t, storage, backup.Target{Time: &drop}, in.server)
	if err != nil {
		t.Fatal(err)
	}
	rdb := openDB(t, restored, dbop.AdminUser, pw.AdminPassword)
	if n := scalar(t, rdb, "SELECT COUNT(*) FROM shop.t"); n != "60" {
		t.Errorf("restored to before the drop: %s rows, want 60", n)
	}
	if n := scalar(t, rdb, "SELECT COUNT(*) FROM information_schema.tables WHERE table_name = 'later'"); n != "0" {
		t.Error("restored to before the drop: a table created after it is there")
	}
	restored, pw, err = restoreInto(t, storage, backup.Target{GTID: at40}, in.server)
	if err != nil {
		t.Fatal(err)
	}
	rdb = openDB(t, restored, dbop.AdminUser, pw.AdminPassword)
	if n := scalar(t, rdb, "SELECT COUNT(*) FROM shop.t"); n != "40" {
		t.Errorf("restored to GTID %s: %s rows, want 40", at40, n)
	}
	if got := scalar(t, rdb, "SELECT @@gtid_binlog_pos"); got != at40 {
		t.Errorf("restored to GTID %s: at %s", at40, got)
	}
	// The restored server's own server_id is another: its replication
	// position must say the same, or a replica seeded from it would start
	// from the backup's position and apply the replayed rows again.
	if got := scalar(t, rdb, "SELECT @@gtid_current_pos"); got != at40 {
		t.Errorf("restored to GTID %s: gtid_current_pos %s", at40, got)
	}
	later := time.Now().Add(time.Hour)
	if _, _, err := restoreInto(t, storage, backup.Target{Time: &later}, in.server); err == nil ||
		!strings.Contains(err.Error(), "is beyond what is archived: from backup b1") {
		t.Errorf("a time after the archive: %v", err)
	}
}

// nextSecond waits until the clock enters a new second and returns it:
// every earlier write has an earlier binary log time.
func nextSecond(t *testing.T) time.Time {
	start := time.Now().Truncate(time.Second)
	deadline := start.Add(3 * time.Second)
	for {
		now := time.Now()
		if now.Truncate(time.Second).After(start) {
			return now.Truncate(time.Second)
		}
		if now.After(deadline) {
			t.Fatal("the clock did not move")
		}
		time.Sleep(10 * time.Millisecond) // polling the clock, not waiting on anything else
	}
}

// position is the position (highest GTID per domain) of a GTID list.
func position(t testing.TB, gtids string) string {
	s, err := topology.ParseMariaDBGTIDSet(gtids)
	if err != nil {
		t.Fatal(err)
	}
	return s.Position().String()
}

// canonical is a GTID list as the archive prints it.
func canonical(t testing.TB, gtids string) string {
	s, err := topology.ParseMariaDBGTIDSet(gtids)
	if err != nil {
		t.Fatal(err)
	}
	return s.String()
}

// atoi parses a count.
func atoi(t testing.TB, s string) int {
	n := 0
	for _, r := range s {
		if r < '0' || r > '9' {
			t.Fatalf("not a count: %q", s)
		}
		n = n*10 + int(r-'0')
	}
	return n
}
