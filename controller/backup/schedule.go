package backup

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/robfig/cron/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/controller/vocabulary"
)

// AnnotationSlot on a scheduled MySQLBackup is the schedule's time it was
// made for (RFC 3339): the schedule goes on from the newest.
const AnnotationSlot = "database.example.com/scheduled-for"

// maxSlots bounds the walk over a schedule's times since the last backup.
const maxSlots = 100000

// Scheduler creates the MySQLBackups of each MySQL's schedule, and
// deletes the scheduled ones its retention lets go.
type Scheduler struct {
	client.Client
	// APIReader reads the storage's Secrets, to prune the archive.
	APIReader client.Reader
	// Recorder records the schedule's events on the MySQL.
	Recorder events.EventRecorder
	// now is the clock; time.Now when nil.
	now func() time.Time
}

// +kubebuilder:rbac:groups=database.example.com,resources=mysqlbackups,verbs=get;list;watch;create;delete;patch
// +kubebuilder:rbac:groups=database.example.com,resources=mysqls,verbs=get;list;watch

// Reconcile takes the backup of the latest time of the schedule that has
// none (one, however many were missed), applies retention, and comes back
// at the schedule's next time.
func (s *Scheduler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	m := &databasev1.MySQL{}
	if err := s.Get(ctx, req.NamespacedName, m); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if m.Spec.Backup == nil || !m.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	list := &databasev1.MySQLBackupList{}
	if err := s.List(ctx, list, client.InNamespace(m.Namespace), client.MatchingLabels{vocabulary.LabelBackupOf: m.Name}); err != nil {
		return ctrl.Result{}, fmt.Errorf("list the backups of %s: %w", m.Name, err)
	}
	now := time.Now()
	if s.now != nil {
		now = s.now()
	}
	var result ctrl.Result
	if p := m.Spec.Backup; p.Schedule != "" && !p.Suspend {
		spec, err := cron.ParseStandard(p.Schedule)
		if err != nil {
			vocabulary.Event(s.Recorder, m, vocabulary.EventScheduleInvalid, "spec.backup.schedule %q: %v", p.Schedule, err)
			return ctrl.Result{}, nil
		}
		due, next := slots(spec, lastSlot(m, list.Items), now)
		if err := s.create(ctx, m, list.Items, due); err != nil {
			return ctrl.Result{}, err
		}
		result.RequeueAfter = max(next.Sub(now), time.Second)
	}
	gone := expired(m.Spec.Backup.Retention, list.Items, now)
	if err := s.expire(ctx, m, gone); err != nil || len(gone) == 0 {
		return result, err
	}
	kept := slices.DeleteFunc(slices.Clone(list.Items), func(b databasev1.MySQLBackup) bool { return slices.Contains(gone, b.Name) })
	return result, pruneArchive(ctx, s.APIReader, s.Recorder, m, kept)
}

// create makes the backup of slot due, unless due is zero, it exists, or a
// backup of the MySQL is still under way.
func (s *Scheduler) create(ctx context.Context, m *databasev1.MySQL, backups []databasev1.MySQLBackup, due time.Time) error {
	if due.IsZero() || slices.ContainsFunc(backups, func(b databasev1.MySQLBackup) bool {
		return !finished(&b) && b.DeletionTimestamp.IsZero()
	}) {
		return nil
	}
	name := ScheduledName(m.Name, due)
	if slices.ContainsFunc(backups, func(b databasev1.MySQLBackup) bool { return b.Name == name }) {
		return nil
	}
	labels := map[string]string{vocabulary.LabelBackupOf: m.Name, vocabulary.LabelScheduled: "true"}
	if shard, ok := m.Labels[vocabulary.LabelShard]; ok {
		labels[vocabulary.LabelShard] = shard
	}
	b := &databasev1.MySQLBackup{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: m.Namespace, Labels: labels,
			Annotations: map[string]string{AnnotationSlot: due.UTC().Format(time.RFC3339)}},
		Spec: databasev1.MySQLBackupSpec{MySQLRef: databasev1.MySQLReference{Name: m.Name}},
	}
	if err := s.Create(ctx, b); client.IgnoreAlreadyExists(err) != nil {
		return fmt.Errorf("create MySQLBackup %s: %w", name, err)
	}
	vocabulary.Event(s.Recorder, m, vocabulary.EventBackupScheduled, "created MySQLBackup %s for %s", name, due.UTC().Format(time.RFC3339))
	return nil
}

// expire deletes the backups retention let go; their finalizer deletes
// their files.
func (s *Scheduler) expire(ctx context.Context, m *databasev1.MySQL, names []string) error {
	for _, name := range names {
		b := &databasev1.MySQLBackup{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: m.Namespace}}
		if err := s.Delete(ctx, b); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("delete MySQLBackup %s: %w", name, err)
		}
		vocabulary.Event(s.Recorder, m, vocabulary.EventBackupExpired, "deleted MySQLBackup %s, which retention lets go", name)
	}
	return nil
}

// ScheduledName is the name of the backup of m's schedule at slot.
func ScheduledName(mysql string, slot time.Time) string {
	return mysql + "-" + slot.UTC().Format("20060102-1504")
}

// lastSlot is the time the schedule goes on from: the newest slot a backup
// was made for, or the MySQL's creation.
func lastSlot(m *databasev1.MySQL, backups []databasev1.MySQLBackup) time.Time {
	last := m.CreationTimestamp.Time
	for _, b := range backups {
		if t, err := time.Parse(time.RFC3339, b.Annotations[AnnotationSlot]); err == nil && t.After(last) {
			last = t
		}
	}
	return last
}

// slots returns the latest time of spec after since and not after now
// (zero when none), and the first time after now.
func slots(spec cron.Schedule, since, now time.Time) (due, next time.Time) {
	t := spec.Next(since.UTC())
	for range maxSlots {
		if t.IsZero() || t.After(now) {
			break
		}
		due, t = t, spec.Next(t)
	}
	return due, t
}

// expired returns the scheduled backups retention lets go: complete ones
// beyond count or older than maxAge, never the newest complete backup,
// and the failed ones older than the newest complete one. Backups made by
// hand are kept until deleted.
func expired(r *databasev1.BackupRetention, backups []databasev1.MySQLBackup, now time.Time) []string {
	if r == nil {
		return nil
	}
	var complete []databasev1.MySQLBackup
	var newest time.Time
	for _, b := range backups {
		if b.Status.Phase == databasev1.BackupComplete && b.Status.CompletionTime != nil && b.DeletionTimestamp.IsZero() {
			complete = append(complete, b)
			newest = maxTime(newest, b.Status.CompletionTime.Time)
		}
	}
	slices.SortFunc(complete, func(a, b databasev1.MySQLBackup) int {
		return b.Status.CompletionTime.Compare(a.Status.CompletionTime.Time)
	})
	var out []string
	for i, b := range complete {
		if i == 0 || b.Labels[vocabulary.LabelScheduled] != "true" {
			continue
		}
		tooMany := r.Count != nil && i >= int(*r.Count)
		tooOld := r.MaxAge != nil && now.Sub(b.Status.CompletionTime.Time) > r.MaxAge.Duration
		if tooMany || tooOld {
			out = append(out, b.Name)
		}
	}
	for _, b := range backups {
		if b.Status.Phase == databasev1.BackupFailed && b.Labels[vocabulary.LabelScheduled] == "true" &&
			b.DeletionTimestamp.IsZero() && !newest.IsZero() && b.CreationTimestamp.Time.Before(newest) {
			out = append(out, b.Name)
		}
	}
	return out
}

// maxTime is the later of a and b.
func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
