package backup

import (
	"fmt"
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/backup"
	"github.com/example/mysql-operator/controller/vocabulary"
)

// The status of a MySQLBackup by the kstatus rules: Pending and Running
// are Reconciling, Complete is Ready, Failed is Stalled. These functions
// only change the object they are given.

// markWaiting makes b Pending (or keeps it Running) for reason.
func markWaiting(b *databasev1.MySQLBackup, phase databasev1.BackupPhase, reason, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	b.Status.Phase, b.Status.Message = phase, msg
	conditions.MarkReconciling(b, reason, "%s", msg)
	conditions.MarkFalse(b, databasev1.ConditionReady, reason, "%s", msg)
	conditions.Delete(b, databasev1.ConditionStalled)
	b.Status.ObservedGeneration = b.Generation
}

// markFailed makes b Failed for reason: a backup that cannot be taken.
func markFailed(b *databasev1.MySQLBackup, reason, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	b.Status.Phase, b.Status.Message = databasev1.BackupFailed, msg
	conditions.MarkStalled(b, reason, "%s", msg)
	conditions.MarkFalse(b, databasev1.ConditionReady, reason, "%s", msg)
	conditions.Delete(b, databasev1.ConditionReconciling)
	b.Status.ObservedGeneration = b.Generation
}

// markComplete records the manifest of a complete backup.
func markComplete(b *databasev1.MySQLBackup, m *backup.Manifest) {
	s := &b.Status
	s.Phase, s.GTID, s.SizeBytes = databasev1.BackupComplete, m.GTID, m.Size()
	s.Size = humanSize(m.Size())
	s.StartTime, s.CompletionTime = ptrTime(m.Start), ptrTime(m.End)
	s.Duration = m.End.Sub(m.Start).Round(time.Second).String()
	s.Files = nil
	for _, f := range m.Files {
		s.Files = append(s.Files, databasev1.BackupFile{Name: f.Name, Size: f.Size, SHA256: f.SHA256})
	}
	s.Message = fmt.Sprintf("backed up %s at GTID %s in %s", m.Instance, m.GTID, s.Duration)
	conditions.MarkTrue(b, databasev1.ConditionReady, vocabulary.ReasonSucceeded, "%s", s.Message)
	conditions.Delete(b, databasev1.ConditionReconciling)
	conditions.Delete(b, databasev1.ConditionStalled)
	s.ObservedGeneration = b.Generation
}

// humanSize prints n bytes in the largest binary unit under it, with one
// decimal: "811.0KiB", "1.2GiB".
func humanSize(n int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB"}
	v, i := float64(n), 0
	for v >= 1024 && i < len(units)-1 {
		v, i = v/1024, i+1
	}
	if i == 0 {
		return fmt.Sprintf("%dB", n)
	}
	return fmt.Sprintf("%.1f%s", v, units[i])
}

// ptrTime is t as a *metav1.Time.
func ptrTime(t time.Time) *metav1.Time {
	mt := metav1.NewTime(t)
	return &mt
}

// finished says whether b reached an end: Complete or Failed.
func finished(b *databasev1.MySQLBackup) bool {
	return b.Status.Phase == databasev1.BackupComplete || b.Status.Phase == databasev1.BackupFailed
}
