package v1_test

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/internal/testenv"
)

// s3 is a valid storage, changed by edits.
func s3(edits map[string]any) map[string]any {
	s := map[string]any{"endpoint": "https://s3.example.com", "bucket": "backups", "prefix": "team/db",
		"credentialsSecretRef": map[string]any{"name": "s3"}}
	for k, v := range edits {
		if v == nil {
			delete(s, k)
			continue
		}
		s[k] = v
	}
	return map[string]any{"s3": s}
}

// withBackup is a valid MySQL spec with the backup policy.
func withBackup(policy map[string]any) map[string]any {
	return map[string]any{"replicas": 1, "engine": "MariaDB", "version": "10.11", "backup": policy}
}

// TestBackupValidation: every invalid backup policy, restore and
// MySQLBackup is rejected with a message naming the field; a restore can
// be set only when the MySQL is created.
func TestBackupValidation(t *testing.T) {
	env := testenv.Start(t)
	ctx := context.Background()
	c := env.Client
	creates := []struct {
		name    string
		spec    map[string]any
		wantErr string
	}{
		{"valid", withBackup(map[string]any{"schedule": "0 3 * * *", "storage": s3(nil), "retention": map[string]any{"count": 7},
			"binlogArchive": map[string]any{}, "rateLimit": "100Mi"}), ""},
		{"no storage", withBackup(map[string]any{"schedule": "0 3 * * *"}), "spec.backup.storage: Required"},
		{"schedule of four fields", withBackup(map[string]any{"schedule": "0 3 * *", "storage": s3(nil)}), "schedule: want a cron expression of five fields"},
		{"endpoint without scheme", withBackup(map[string]any{"storage": s3(map[string]any{"endpoint": "s3.example.com"})}), "endpoint: want http(s)://host[:port]"},
		{"endpoint with a path", withBackup(map[string]any{"storage": s3(map[string]any{"endpoint": "https://s3.example.com/x"})}), "endpoint: want http(s)://host[:port]"},
		{"bucket in capitals", withBackup(map[string]any{"storage": s3(map[string]any{"bucket": "Backups"})}), "spec.backup.storage.s3.bucket"},
		{"prefix with a trailing slash", withBackup(map[string]any{"storage": s3(map[string]any{"prefix": "team/"})}), "prefix: no leading, trailing or double slash"},
		{"no credentials", withBackup(map[string]any{"storage": s3(map[string]any{"credentialsSecretRef": nil})}), "spec.backup.storage.s3.credentialsSecretRef: Required"},
		{"empty retention", withBackup(map[string]any{"storage": s3(nil), "retention": map[string]any{}}), "retention: set count, maxAge or both"},
		{"retention of a minute", withBackup(map[string]any{"storage": s3(nil), "retention": map[string]any{"maxAge": "1m"}}), "maxAge: at least 1h"},
		{"archive delay of a second", withBackup(map[string]any{"storage": s3(nil), "binlogArchive": map[string]any{"maxDelay": "1s"}}), "maxDelay: from 5s to 1h"},
		{"rate limit of a KiB", withBackup(map[string]any{"storage": s3(nil), "rateLimit": "1Ki"}), "rateLimit: at least 1Mi per second"},
		{"source unknown", withBackup(map[string]any{"storage": s3(nil), "source": "Any"}), "spec.backup.source"},
		{"restore to a time and a GTID", map[string]any{"replicas": 1, "engine": "MariaDB", "version": "10.11",
			"restore": map[string]any{"storage": s3(nil), "pointInTime": "2026-12-01T14:03:27Z", "gtid": "0-1-5"}}, "restore: set pointInTime or gtid, not both"},
		{"restore to a bad GTID", map[string]any{"replicas": 1, "engine": "MariaDB", "version": "10.11",
			"restore": map[string]any{"storage": s3(nil), "gtid": "0-1"}}, "spec.restore.gtid"},
		{"restore valid", map[string]any{"replicas": 1, "engine": "MariaDB", "version": "10.11",
			"restore": map[string]any{"storage": s3(nil), "pointInTime": "2026-12-01T14:03:27Z"}}, ""},
	}
	for i, tt := range creates {
		t.Run("create/"+tt.name, func(t *testing.T) {
			err := c.Create(ctx, mysql("backup-"+string(rune('a'+i)), tt.spec))
			checkErr(t, err, tt.wantErr)
		})
	}
	t.Run("defaults", func(t *testing.T) {
		got := &databasev1.MySQL{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "backup-a"}, got); err != nil {
			t.Fatal(err)
		}
		p := got.Spec.Backup
		if p.Source != databasev1.BackupFromReplica || p.BinlogArchive.MaxDelay == nil || p.BinlogArchive.MaxDelay.Duration.String() != "1m0s" {
			t.Errorf("defaults: source %q, archive %+v", p.Source, p.BinlogArchive)
		}
	})
	t.Run("restore set after creation", func(t *testing.T) {
		obj := mysql("restore-later", map[string]any{"replicas": 1, "engine": "MariaDB", "version": "10.11"})
		if err := c.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
		obj.Object["spec"].(map[string]any)["restore"] = map[string]any{"storage": s3(nil)}
		checkErr(t, c.Update(ctx, obj), "restore: can be set only when the MySQL is created")
	})
	t.Run("MySQLBackup's mysqlRef is immutable", func(t *testing.T) {
		b := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"mysqlRef": map[string]any{"name": "a"}}}}
		b.SetGroupVersionKind(databasev1.GroupVersion.WithKind(databasev1.MySQLBackupKind))
		b.SetName("bk")
		b.SetNamespace("default")
		if err := c.Create(ctx, b); err != nil {
			t.Fatal(err)
		}
		b.Object["spec"] = map[string]any{"mysqlRef": map[string]any{"name": "b"}}
		checkErr(t, c.Update(ctx, b), "mysqlRef: is immutable")
	})
}
