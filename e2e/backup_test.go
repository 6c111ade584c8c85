package e2e

import (
	"context"
	"database/sql"
	"slices"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/backup"
	"github.com/example/mysql-operator/internal/testenv"
	"github.com/example/mysql-operator/objstore"
)

// TestBackupAndPointInTimeRestore backs up a MySQL of three instances on
// the real node into the cluster's S3 server under a writer (the backup is
// verified in a scratch pod), fails the primary over while its binary logs
// are archived, drops a table, and restores a new MySQL of two instances to
// the second before the drop: every acknowledged row of both primaries'
// tenures is there, the table too, and nothing written after. Deleting the
// backup deletes its files.
func TestBackupAndPointInTimeRestore(t *testing.T) {
	ctx := context.Background()
	ns := testenv.NewNamespace(t, c.Client)
	storage, err := c.BackupStorage(ctx, ns, "s3", "backups-"+ns, "team/src")
	if err != nil {
		t.Fatal(err)
	}
	src := &databasev1.MySQL{ObjectMeta: metav1.ObjectMeta{Name: "src", Namespace: ns}, Spec: realNodeSpec(3)}
	src.Spec.Backup = &databasev1.BackupPolicy{Storage: storage, Verify: true,
		BinlogArchive: &databasev1.BinlogArchive{MaxDelay: &metav1.Duration{Duration: 5 * time.Second}}}
	if err := c.Client.Create(ctx, src); err != nil {
		t.Fatal(err)
	}
	waitCurrent(t, key(ns, "src"))
	w := startWriter(t, ns, "src")
	eventually(t, "a few writes", func(context.Context) (bool, error) { return w.count() > 20, nil })

	began := time.Now()
	b := takeBackup(t, ns, "src", "src-manual")
	gap, _, _ := w.Outage(began, time.Now())
	record(t, "backup under a writer, the writer's longest pause", gap)
	if gap >= time.Second {
		t.Errorf("the writer paused %s during the backup, want under 1s", gap)
	}
	if b.Status.Instance == "src-0" || b.Status.GTID == "" || len(b.Status.Files) != 1 || b.Status.SizeBytes == 0 {
		t.Errorf("backup status %+v: want one file taken on a replica at a GTID", b.Status)
	}
	eventually(t, "the backup to be verified", func(ctx context.Context) (bool, error) {
		err := c.Client.Get(ctx, key(ns, b.Name), b)
		v := meta.FindStatusCondition(b.Status.Conditions, databasev1.ConditionVerified)
		if v != nil && v.Status != metav1.ConditionTrue {
			t.Fatalf("the backup did not verify: %s", v.Message)
		}
		return v != nil, err
	})
	t.Logf("verified: %s", meta.FindStatusCondition(b.Status.Conditions, databasev1.ConditionVerified).Message)

	failOver(t, ns, "src", w)
	db := rootDB(t, ns, "src", "src-primary")
	mustExec(t, db, "CREATE TABLE shop.t (n INT PRIMARY KEY)")
	for n := 1; n <= 50; n++ {
		mustExec(t, db, "INSERT INTO shop.t VALUES (?)", n)
	}
	w.Stop()
	drop := nextSecond(t)
	mustExec(t, db, "DROP TABLE shop.t")
	mustExec(t, db, "CREATE TABLE shop.later (n INT)")
	store := bucketStore(t, storage)
	eventually(t, "the archive to hold the drop, in two tenures", func(ctx context.Context) (bool, error) {
		_, segs, err := backup.Catalog(ctx, store)
		tenures := map[string]bool{}
		for _, s := range segs {
			tenures[s.Tenure] = true
		}
		return len(tenures) >= 2 && slices.ContainsFunc(segs, func(s backup.Segment) bool { return !s.IsHead() && !s.Last.Before(drop) }), err
	})

	restored := &databasev1.MySQL{ObjectMeta: metav1.ObjectMeta{Name: "restored", Namespace: ns}, Spec: realNodeSpec(2)}
	restored.Spec.Restore = &databasev1.RestoreSpec{Storage: storage, PointInTime: &metav1.Time{Time: drop}}
	if err := c.Client.Create(ctx, restored); err != nil {
		t.Fatal(err)
	}
	waitCurrent(t, key(ns, "restored"))
	rdb := rootDB(t, ns, "restored", "restored-primary")
	if n := count(t, rdb, "SELECT COUNT(*) FROM shop.t"); n != 50 {
		t.Errorf("restored to the second before the drop: shop.t has %d rows, want 50", n)
	}
	if n := count(t, rdb, "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = 'shop' AND table_name = 'later'"); n != 0 {
		t.Error("restored to the second before the drop: a table created after it is there")
	}
	lost, acked, err := w.Lost(rdb)
	if err != nil || len(lost) > 0 {
		t.Errorf("%d of %d acknowledged writes are not in the restored MySQL (%v)", len(lost), acked, err)
	}
	got := getMySQL(t, ns, "restored").Status.Restore
	if got == nil || got.Backup != "src-manual" || got.ReplayedBinlogs == 0 {
		t.Errorf("status.restore %+v: want backup src-manual and the archived binary logs replayed", got)
	}
	t.Logf("restored %d acknowledged writes and shop.t; status.restore %+v", acked, got)

	if err := c.Client.Delete(ctx, b); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the backup and its files to go", func(ctx context.Context) (bool, error) {
		err := c.Client.Get(ctx, key(ns, b.Name), &databasev1.MySQLBackup{})
		if !apierrors.IsNotFound(err) {
			return false, client.IgnoreNotFound(err)
		}
		left, err := store.List(ctx, backup.BackupsDir+b.Name+"/")
		return len(left) == 0, err
	})
}

// failOver loses the primary of name (its pod force-deleted while the node
// takes no new pod) under the writer w, and waits until writes go on on
// another instance; the node then takes the pod back.
func failOver(t *testing.T, ns, name string, w *writer) {
	t.Helper()
	ctx := context.Background()
	old := getMySQL(t, ns, name).Status.CurrentPrimary
	pod := &corev1.Pod{}
	if err := c.Client.Get(ctx, key(ns, old), pod); err != nil {
		t.Fatal(err)
	}
	holdNode(t, true)
	if err := c.Client.Delete(ctx, pod, client.GracePeriodSeconds(0)); err != nil {
		t.Fatal(err)
	}
	_ = c.KillContainer(pod, "mysql")
	killed := time.Now()
	eventually(t, "writes on a new primary", func(context.Context) (bool, error) {
		_, ok := w.Recovered(killed)
		return ok && getMySQL(t, ns, name).Status.CurrentPrimary != old, nil
	})
	holdNode(t, false)
	t.Logf("failed over from %s to %s", old, getMySQL(t, ns, name).Status.CurrentPrimary)
}

// takeBackup creates a MySQLBackup of mysql and waits until it completes.
func takeBackup(t *testing.T, ns, mysql, name string) *databasev1.MySQLBackup {
	t.Helper()
	b := &databasev1.MySQLBackup{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: databasev1.MySQLBackupSpec{MySQLRef: databasev1.MySQLReference{Name: mysql}}}
	if err := c.Client.Create(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	eventually(t, "backup "+name+" to complete", func(ctx context.Context) (bool, error) {
		if err := c.Client.Get(ctx, key(ns, name), b); err != nil {
			return false, err
		}
		if b.Status.Phase == databasev1.BackupFailed {
			t.Fatalf("backup %s failed: %s", name, b.Status.Message)
		}
		return b.Status.Phase == databasev1.BackupComplete, nil
	})
	t.Logf("backup %s: %s, %s in %s on %s", name, b.Status.GTID, b.Status.Size, b.Status.Duration, b.Status.Instance)
	return b
}

// bucketStore is the store of storage, with the cluster's credentials.
func bucketStore(t *testing.T, storage databasev1.BackupStorage) *objstore.Store {
	t.Helper()
	s, err := objstore.New(c.S3.Config(storage.S3.Bucket, storage.S3.Prefix))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// nextSecond waits until the clock enters a new second and returns it:
// every earlier write has an earlier binary log time.
func nextSecond(t *testing.T) time.Time {
	t.Helper()
	start := time.Now().Truncate(time.Second)
	for {
		now := time.Now()
		if now.Truncate(time.Second).After(start) {
			return now.Truncate(time.Second)
		}
		if now.Sub(start) > 3*time.Second {
			t.Fatal("the clock did not move")
		}
		time.Sleep(10 * time.Millisecond) // polling the clock
	}
}

// count runs a COUNT query.
func count(t *testing.T, db *sql.DB, query string) int {
	t.Helper()
	var s string
	if err := db.QueryRow(query).Scan(&s); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
