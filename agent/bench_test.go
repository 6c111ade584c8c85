package agent

import (
	"context"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/example/mysql-operator/backup"
	"github.com/example/mysql-operator/dbop"
	"github.com/example/mysql-operator/internal/s3test"
	"github.com/example/mysql-operator/objstore"
)

// The backup benchmarks (docs/backup.md): `go test ./agent -run '^$' -bench
// . -benchtime 1x`; BACKUP_BENCH_MB sizes the data (default 1024),
// ARCHIVE_BENCH_SECONDS the writer of the archive's (default 120).

// envInt reads a positive integer from the environment.
func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

// BenchmarkBackupThroughput measures, in one run on one disk, the rate of
// reading and compressing a data directory (the raw rate), of a backup of
// it into versitygw, and of its restore, each in bytes of the data
// directory per second, with the page cache dropped before each. The data
// directory is what a backup copies: every file but the binary and relay
// logs and the redo log (of which a backup copies what is written while
// it runs).
func BenchmarkBackupThroughput(b *testing.B) {
	mb := envInt("BACKUP_BENCH_MB", 1024)
	in := startInstance(b, "bench", "innodb_buffer_pool_size=256M", "innodb_log_file_size=256M")
	_, storage := startS3(b)
	in.withBackups(storage, 0)
	loadData(b, in, int64(mb)<<20)
	ctx := context.Background()
	for i := range b.N {
		dropCaches(b)
		raw, rawTook := compressDir(b, in.c.DataDir)
		dropCaches(b)
		streamTook := streamOnly(b, in)
		dropCaches(b)
		var progress atomic.Int64
		began := time.Now()
		m, err := in.c.takeBackup(ctx, "bench-"+strconv.Itoa(i), &progress)
		if err != nil {
			b.Fatal(err)
		}
		backupTook := time.Since(began)
		dropCaches(b)
		began = time.Now()
		if _, _, err := restoreInto(b, storage, backup.Target{Backup: m.Name}, in.server); err != nil {
			b.Fatal(err)
		}
		restoreTook := time.Since(began)
		rate := func(n int64, d time.Duration) float64 { return float64(n) / d.Seconds() / (1 << 20) }
		b.ReportMetric(rate(raw, rawTook), "raw-MiB/s")
		b.ReportMetric(rate(raw, backupTook), "backup-MiB/s")
		b.ReportMetric(rate(raw, restoreTook), "restore-MiB/s")
		b.ReportMetric(rawTook.Seconds()/backupTook.Seconds(), "backup/raw")
		b.ReportMetric(rawTook.Seconds()/restoreTook.Seconds(), "restore/raw")
		b.ReportMetric(rawTook.Seconds()/streamTook.Seconds(), "stream/raw")
		b.Logf("data directory %d MiB read and compressed in %s; the backup program's stream compressed, not stored, in %s; backup stream %d MiB (%d MiB stored) in %s; restore in %s",
			raw>>20, rawTook.Round(time.Millisecond), streamTook.Round(time.Millisecond), m.RawSize>>20, m.Size()>>20,
			backupTook.Round(time.Millisecond), restoreTook.Round(time.Millisecond))
	}
}

// streamOnly runs the backup program into the compressor and discards
// what comes out: the backup without the S3 server's share of the disk and
// of the two cores.
func streamOnly(b *testing.B, in *instance) time.Duration {
	t := toolsFor(dbop.EngineMariaDB)
	opts, err := in.c.optionFile(t.section)
	if err != nil {
		b.Fatal(err)
	}
	defer os.Remove(opts)
	work := b.TempDir()
	args := t.backupArgs(opts, filepath.Join(work, "tmp"), "")
	cmd := exec.Command(args[0], args[1:]...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	began := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	if err := compress(io.Discard, out); err != nil {
		b.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		b.Fatal(err)
	}
	return time.Since(began)
}

// loadData fills bench.t until the server's data is size bytes: rows as
// compressible as an application's (hex digests, repeated words, numbers).
func loadData(b *testing.B, in *instance, size int64) {
	db := in.db()
	execSQL(b, db, "CREATE DATABASE bench", "CREATE TABLE bench.t (id BIGINT PRIMARY KEY, a CHAR(32), b VARCHAR(255), c BIGINT)")
	for from := 0; ; from += 100000 {
		execSQL(b, db, "INSERT INTO bench.t SELECT seq, MD5(seq), CONCAT(REPEAT(SUBSTR(MD5(seq * 7), 1, 8), 6), ' row ', seq), seq * 31 FROM bench.seq_"+
			strconv.Itoa(from+1)+"_to_"+strconv.Itoa(from+100000))
		n, err := strconv.ParseInt(scalar(b, db, "SELECT SUM(data_length + index_length) FROM information_schema.tables WHERE table_schema = 'bench'"), 10, 64)
		if err != nil {
			b.Fatal(err)
		}
		if n >= size {
			break
		}
	}
	execSQL(b, db, "SET GLOBAL innodb_max_dirty_pages_pct = 0", "FLUSH TABLES")
}

// compressDir reads every file of dir but the binary, relay and redo logs, and
// compresses it as a backup does; it returns the bytes read and the time.
func compressDir(b *testing.B, dir string) (int64, time.Duration) {
	began := time.Now()
	var n int64
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- compress(io.Discard, pr) }()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.Contains(d.Name(), "bin.") || strings.HasPrefix(d.Name(), "relay") ||
			strings.HasPrefix(d.Name(), "ib_logfile") {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		c, err := io.Copy(pw, f)
		n += c
		return err
	})
	pw.CloseWithError(err)
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	return n, time.Since(began)
}

// dropCaches writes the dirty pages out and empties the page cache, so
// that each measure reads the disk and none pays for another's writes;
// without root it says so.
func dropCaches(b *testing.B) {
	syscall.Sync()
	if err := os.WriteFile("/proc/sys/vm/drop_caches", []byte("3\n"), 0o200); err != nil {
		b.Logf("the page cache stays: %v", err)
	}
}

// BenchmarkArchiveLag runs the archive of a primary under a steady writer
// (50 commits per second) with a delay of 10 s, and reports the most any
// commit waited to be archived (an archived file's index written, minus
// its first transaction's time), then the SQL and S3 requests of a
// minute of the archive on an idle primary.
func BenchmarkArchiveLag(b *testing.B) {
	const delay = 10 * time.Second
	seconds := envInt("ARCHIVE_BENCH_SECONDS", 120)
	in := startInstance(b, "lag")
	s3, err := s3test.Run(context.Background(), s3test.Options{Dir: b.TempDir(), AccessLog: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(s3.Stop)
	storage := s3.Bucket(b, "backups", "lag")
	in.withBackups(storage, delay)
	db := in.db()
	execSQL(b, db, "SET GLOBAL read_only = OFF", "CREATE DATABASE shop", "CREATE TABLE shop.t (n INT PRIMARY KEY)")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a := &archiver{c: in.c, log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	go a.run(ctx)
	for n, end := 1, time.Now().Add(time.Duration(seconds)*time.Second); time.Now().Before(end); n++ {
		insertRows(b, db, n, n)
		time.Sleep(20 * time.Millisecond) // the writer's pace: 50 commits per second
	}
	want := canonical(b, scalar(b, db, "SELECT @@gtid_binlog_state"))
	for deadline := time.Now().Add(3 * delay); a.status().Position != want; {
		if time.Now().After(deadline) {
			b.Fatalf("the archive is at %q, the server at %q", a.status().Position, want)
		}
		time.Sleep(100 * time.Millisecond) // polling the archive's state
	}
	worst := archiveLag(b, newStore(b, storage))
	b.ReportMetric(worst.Seconds(), "max-lag-s")
	b.Logf("the longest a commit waited to be archived: %s (delay %s, target %s)", worst.Round(time.Millisecond), delay, delay+2*time.Second)

	questions := func() int {
		return atoi(b, scalar(b, db, "SELECT VARIABLE_VALUE FROM information_schema.global_status WHERE VARIABLE_NAME = 'QUESTIONS'"))
	}
	q0, r0 := questions(), requests(b, s3)
	time.Sleep(time.Minute) // a minute of the idle archive, counted
	q1, r1 := questions(), requests(b, s3)
	b.ReportMetric(float64(q1-q0-1), "idle-sql/min")
	b.ReportMetric(float64(r1-r0), "idle-s3/min")
}

// archiveLag is the longest any archived file's first transaction waited
// for the file's index to be written.
func archiveLag(b *testing.B, store *objstore.Store) time.Duration {
	objs, err := store.List(context.Background(), backup.BinlogsDir)
	if err != nil {
		b.Fatal(err)
	}
	var worst time.Duration
	for _, o := range objs {
		if _, file, ok := backup.ParseIndexKey(o.Name); !ok || file == backup.HeadFile {
			continue
		}
		var seg backup.Segment
		if err := backup.ReadJSON(context.Background(), store, o.Name, &seg); err != nil {
			b.Fatal(err)
		}
		if seg.Transactions > 0 {
			worst = max(worst, o.Modified.Sub(seg.First))
		}
	}
	return worst
}

// requests counts the S3 server's requests so far.
func requests(b *testing.B, s *s3test.Server) int {
	n, err := s.Requests()
	if err != nil {
		b.Fatal(err)
	}
	return n
}
