package backup

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/controller/children"
	"github.com/example/mysql-operator/controller/vocabulary"
	"github.com/example/mysql-operator/internal/ctrltest"
	"github.com/example/mysql-operator/internal/testenv"
)

// TestSchedule runs the schedule as the operator's user, a day ahead of
// the MySQL's creation: it creates the backup of the latest time due, and
// once a second scheduled backup completes, retention (count 1) deletes
// the older one.
func TestSchedule(t *testing.T) {
	ctx := context.Background()
	mgr, _ := env.NewManager(t, children.CacheOptions(labels.Everything()))
	s := &Scheduler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder(vocabulary.FieldManager),
		now: func() time.Time { return time.Now().Add(24 * time.Hour) }}
	ctrltest.Run(t, mgr, func(ctx context.Context) error { return s.SetupWithManager(ctx, mgr) })

	ns := env.NewNamespace(t)
	m := ctrltest.NewMySQL(ns, "db", 1)
	m.Spec.Backup = &databasev1.BackupPolicy{Schedule: "0 3 * * *", Retention: &databasev1.BackupRetention{Count: ptr.To[int32](1)},
		Storage: databasev1.BackupStorage{S3: databasev1.S3Storage{Endpoint: "http://s3.example.com", Bucket: "backups",
			CredentialsSecretRef: databasev1.LocalSecretReference{Name: "s3"}}}}
	env.Create(t, m)
	due := time.Now().Add(24 * time.Hour).UTC().Truncate(24 * time.Hour).Add(3 * time.Hour)
	if due.After(time.Now().Add(24 * time.Hour)) {
		due = due.Add(-24 * time.Hour)
	}
	name := ScheduledName("db", due)
	scheduled := &databasev1.MySQLBackup{}
	testenv.Eventually(t, 30*time.Second, "the scheduled backup "+name, func(ctx context.Context) (bool, error) {
		return client.IgnoreNotFound(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, scheduled)) == nil &&
			scheduled.Name == name, nil
	})
	if scheduled.Labels[vocabulary.LabelBackupOf] != "db" || scheduled.Labels[vocabulary.LabelScheduled] != "true" ||
		scheduled.Spec.MySQLRef.Name != "db" || len(scheduled.OwnerReferences) != 0 {
		t.Errorf("scheduled backup %+v: want the labels, the MySQL named, no owner", scheduled.ObjectMeta)
	}

	older := &databasev1.MySQLBackup{ObjectMeta: metav1.ObjectMeta{Name: "db-older", Namespace: ns,
		Labels: map[string]string{vocabulary.LabelBackupOf: "db", vocabulary.LabelScheduled: "true"}},
		Spec: databasev1.MySQLBackupSpec{MySQLRef: databasev1.MySQLReference{Name: "db"}}}
	if err := env.Client.Create(ctx, older); err != nil {
		t.Fatal(err)
	}
	complete(t, older, time.Now().Add(-time.Hour))
	complete(t, scheduled, time.Now())
	testenv.Eventually(t, 30*time.Second, "retention to delete the older backup", func(ctx context.Context) (bool, error) {
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(older), &databasev1.MySQLBackup{})
		return client.IgnoreNotFound(err) == nil && err != nil, client.IgnoreNotFound(err)
	})
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(scheduled), &databasev1.MySQLBackup{}); err != nil {
		t.Errorf("the newest complete backup: %v", err)
	}
}

// complete marks b Complete at t, as the backup reconciler would.
func complete(t *testing.T, b *databasev1.MySQLBackup, at time.Time) {
	t.Helper()
	patch := client.MergeFrom(b.DeepCopy())
	b.Status.Phase, b.Status.CompletionTime = databasev1.BackupComplete, &metav1.Time{Time: at}
	if err := env.Client.Status().Patch(context.Background(), b, patch); err != nil {
		t.Fatal(err)
	}
}
