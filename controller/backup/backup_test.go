package backup

import (
	"slices"
	"testing"
	"time"

	"github.com/robfig/cron/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/controller/vocabulary"
)

// TestPickSource: the ready replica with the least lag, the primary of a
// single instance or when asked, and why none when none.
func TestPickSource(t *testing.T) {
	inst := func(name string, role databasev1.InstanceRole, ready bool, lag int64) databasev1.InstanceStatus {
		return databasev1.InstanceStatus{Name: name, Role: role, Ready: ready, LagSeconds: ptr.To(lag)}
	}
	mysql := func(replicas int32, source databasev1.BackupSource, ins ...databasev1.InstanceStatus) *databasev1.MySQL {
		return &databasev1.MySQL{Spec: databasev1.MySQLSpec{Replicas: replicas, Backup: &databasev1.BackupPolicy{Source: source}},
			Status: databasev1.MySQLStatus{CurrentPrimary: "db-0", Instances: ins}}
	}
	for _, tt := range []struct {
		name string
		m    *databasev1.MySQL
		want string
		why  string
	}{
		{"the replica with the least lag", mysql(3, databasev1.BackupFromReplica, inst("db-0", databasev1.RolePrimary, true, 0),
			inst("db-1", databasev1.RoleReplica, true, 3), inst("db-2", databasev1.RoleReplica, true, 1)), "db-2", ""},
		{"a ready replica only", mysql(3, "", inst("db-0", databasev1.RolePrimary, true, 0),
			inst("db-1", databasev1.RoleReplica, false, 0), inst("db-2", databasev1.RoleReplica, true, 5)), "db-2", ""},
		{"no ready replica", mysql(2, databasev1.BackupFromReplica, inst("db-0", databasev1.RolePrimary, true, 0),
			inst("db-1", databasev1.RoleReplica, false, 0)), "", "waiting for a ready replica to take the backup on (spec.backup.source Replica spares the primary): 1 of 2 instances are ready"},
		{"one instance: its primary", mysql(1, databasev1.BackupFromReplica, inst("db-0", databasev1.RolePrimary, true, 0)), "db-0", ""},
		{"the primary when asked", mysql(3, databasev1.BackupFromPrimary, inst("db-0", databasev1.RolePrimary, true, 0),
			inst("db-1", databasev1.RoleReplica, true, 0)), "db-0", ""},
		{"no ready primary", mysql(1, "", inst("db-0", databasev1.RolePrimary, false, 0)), "", "waiting for a ready primary to take the backup on"},
	} {
		got, why := pickSource(tt.m)
		if got != tt.want || why != tt.why {
			t.Errorf("%s: %q (%s), want %q (%s)", tt.name, got, why, tt.want, tt.why)
		}
	}
}

// TestSlots: the latest time due since the last backup, one however many
// were missed, and the next.
func TestSlots(t *testing.T) {
	spec, err := cron.ParseStandard("0 3 * * *")
	if err != nil {
		t.Fatal(err)
	}
	day := func(d, h, m int) time.Time { return time.Date(2026, 12, d, h, m, 0, 0, time.UTC) }
	for _, tt := range []struct {
		since, now, due, next time.Time
	}{
		{day(1, 12, 0), day(2, 2, 59), time.Time{}, day(2, 3, 0)},
		{day(1, 12, 0), day(2, 3, 0), day(2, 3, 0), day(3, 3, 0)},
		{day(1, 12, 0), day(5, 10, 0), day(5, 3, 0), day(6, 3, 0)},
		{day(5, 3, 0), day(5, 10, 0), time.Time{}, day(6, 3, 0)},
	} {
		due, next := slots(spec, tt.since, tt.now)
		if !due.Equal(tt.due) || !next.Equal(tt.next) {
			t.Errorf("since %s, now %s: due %s next %s, want %s and %s", tt.since, tt.now, due, next, tt.due, tt.next)
		}
	}
	if got := ScheduledName("db", day(5, 3, 0)); got != "db-20261205-0300" {
		t.Errorf("scheduled name %s", got)
	}
}

// TestExpired: count and age let scheduled complete backups go, never
// the newest complete one nor one made by hand; failed scheduled ones go
// once a later backup completed.
func TestExpired(t *testing.T) {
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	bk := func(name string, phase databasev1.BackupPhase, hoursAgo int, scheduled bool) databasev1.MySQLBackup {
		b := databasev1.MySQLBackup{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{},
			CreationTimestamp: metav1.NewTime(now.Add(-time.Duration(hoursAgo) * time.Hour))}}
		b.Status.Phase = phase
		if phase == databasev1.BackupComplete {
			b.Status.CompletionTime = ptrTime(now.Add(-time.Duration(hoursAgo) * time.Hour))
		}
		if scheduled {
			b.Labels[vocabulary.LabelScheduled] = "true"
		}
		return b
	}
	backups := []databasev1.MySQLBackup{
		bk("b1", databasev1.BackupComplete, 50, true), bk("b2", databasev1.BackupComplete, 40, false),
		bk("b3", databasev1.BackupFailed, 30, true), bk("b4", databasev1.BackupComplete, 20, true),
		bk("b5", databasev1.BackupComplete, 10, true), bk("b6", databasev1.BackupFailed, 1, true),
	}
	for _, tt := range []struct {
		name string
		r    *databasev1.BackupRetention
		want []string
	}{
		{"no retention", nil, nil},
		{"count 2", &databasev1.BackupRetention{Count: ptr.To[int32](2)}, []string{"b1", "b3"}},
		{"count 1", &databasev1.BackupRetention{Count: ptr.To[int32](1)}, []string{"b4", "b1", "b3"}},
		{"a day", &databasev1.BackupRetention{MaxAge: &metav1.Duration{Duration: 24 * time.Hour}}, []string{"b1", "b3"}},
		{"an hour: the newest stays", &databasev1.BackupRetention{MaxAge: &metav1.Duration{Duration: time.Hour}}, []string{"b4", "b1", "b3"}},
	} {
		got := expired(tt.r, backups, now)
		slices.Sort(got)
		want := slices.Sorted(slices.Values(tt.want))
		if !slices.Equal(got, want) {
			t.Errorf("%s: %v, want %v", tt.name, got, want)
		}
	}
}

// TestHumanSize: sizes as a reader of kubectl get wants them.
func TestHumanSize(t *testing.T) {
	for n, want := range map[int64]string{0: "0B", 1000: "1000B", 830302: "810.8KiB", 5 << 30: "5.0GiB"} {
		if got := humanSize(n); got != want {
			t.Errorf("%d: %s, want %s", n, got, want)
		}
	}
}
