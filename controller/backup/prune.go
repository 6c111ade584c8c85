package backup

import (
	"context"
	"slices"

	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/backup"
	"github.com/example/mysql-operator/controller/vocabulary"
)

// pruneArchive deletes the archived binary logs that no restore from the
// oldest backup kept can need (backup.Prunable), once retention deleted
// backups. kept are the MySQL's backups retention keeps.
func pruneArchive(ctx context.Context, r client.Reader, rec events.EventRecorder, m *databasev1.MySQL, kept []databasev1.MySQLBackup) error {
	if m.Spec.Backup.BinlogArchive == nil {
		return nil
	}
	store, err := openStore(ctx, r, m.Namespace, m.Spec.Backup.Storage)
	if err != nil {
		return err
	}
	manifests, segments, err := backup.Catalog(ctx, store)
	if err != nil {
		return err
	}
	var oldest *backup.Manifest
	for i, mf := range manifests {
		isKept := slices.ContainsFunc(kept, func(b databasev1.MySQLBackup) bool {
			return b.Name == mf.Name && b.Status.Phase == databasev1.BackupComplete
		})
		if isKept && (oldest == nil || mf.Start.Before(oldest.Start)) {
			oldest = &manifests[i]
		}
	}
	var keys []string
	for _, s := range backup.Prunable(oldest, segments) {
		keys = append(keys, backup.SegmentKeys(s)...)
	}
	if len(keys) == 0 {
		return nil
	}
	if err := store.Delete(ctx, keys...); err != nil {
		return err
	}
	vocabulary.Event(rec, m, vocabulary.EventArchivePruned, "deleted %d archived binary log objects older than backup %s", len(keys), oldest.Name)
	return nil
}
