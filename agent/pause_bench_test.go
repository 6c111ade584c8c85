package agent

import (
	"context"
	"database/sql"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkBackupPause takes a backup on a primary (what a MySQL of one
// instance, or `source: Primary`, does) while a writer commits one row at
// a time, and reports the longest any commit waited. mariadb-backup 10.11
// holds BACKUP STAGE BLOCK_COMMIT at its end while its redo log copier
// catches up, and no commit ends in that time. Two writers: one as fast
// as it can, one at 10 commits a second (a quiet primary).
// `go test ./agent -run '^$' -bench BackupPause -benchtime 1x -count 5` (docs/backup.md).
func BenchmarkBackupPause(b *testing.B) {
	in := startInstance(b, "pause", "sync_binlog=1", "innodb_flush_log_at_trx_commit=1",
		"innodb_buffer_pool_size=128M", "innodb_log_file_size=128M")
	_, storage := startS3(b)
	in.withBackups(storage, 0)
	db := in.db()
	execSQL(b, db, "SET GLOBAL read_only = OFF", "CREATE DATABASE shop", "CREATE TABLE shop.t (n BIGINT PRIMARY KEY)")
	loadData(b, in, 64<<20) // something to copy: the backup runs about a second before its end
	execSQL(b, db, "SET GLOBAL innodb_max_dirty_pages_pct = DEFAULT")
	var next atomic.Int64
	for _, pace := range []time.Duration{0, 100 * time.Millisecond} {
		name := "full-speed"
		if pace > 0 {
			name = "10-per-second"
		}
		b.Run(name, func(b *testing.B) {
			for range b.N {
				ctx, cancel := context.WithCancel(context.Background())
				result := make(chan commitPause, 1)
				go func() { result <- writeUntil(ctx, db, pace, &next) }()
				var progress atomic.Int64
				taken := strconv.FormatInt(time.Now().UnixNano(), 36) // a new backup each time
				if _, err := in.c.takeBackup(context.Background(), name+"-"+taken, &progress); err != nil {
					b.Fatal(err)
				}
				cancel()
				p := <-result
				if p.err != nil {
					b.Fatal(p.err)
				}
				b.ReportMetric(p.longest.Seconds(), "longest-commit-s")
				b.Logf("%d commits during the backup, the longest waited %s", p.commits, p.longest.Round(time.Millisecond))
			}
		})
	}
}

// commitPause is what a writer saw.
type commitPause struct {
	commits int
	longest time.Duration
	err     error
}

// writeUntil commits one row at a time into shop.t, pace apart (0: at
// once), until ctx ends, and returns the longest a commit took.
func writeUntil(ctx context.Context, db *sql.DB, pace time.Duration, next *atomic.Int64) commitPause {
	var p commitPause
	for ctx.Err() == nil {
		began := time.Now()
		if _, err := db.Exec("INSERT INTO shop.t VALUES (?)", next.Add(1)); err != nil {
			p.err = err
			return p
		}
		p.commits++
		p.longest = max(p.longest, time.Since(began))
		if wait := pace - time.Since(began); wait > 0 {
			select {
			case <-ctx.Done():
			case <-time.After(wait): // the writer's pace
			}
		}
	}
	return p
}
