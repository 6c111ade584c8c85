package agent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"time"

	"github.com/klauspost/compress/zstd"
	"golang.org/x/time/rate"

	"github.com/example/mysql-operator/backup"
	"github.com/example/mysql-operator/dbop"
	"github.com/example/mysql-operator/objstore"
)

// A backup to the MySQL's storage: the engine's backup program streams
// the instance's files (backupArgs) through zstd into a multipart upload
// of backups/<name>/backup.xbstream.zst, with no staging disk and with
// memory bounded by the upload's parts; the SHA-256 of what is stored is
// computed on the way. The manifest, written last, makes it complete: an
// upload cut off leaves no manifest, and the next attempt starts again.

// takeBackup backs the instance up as name and returns its manifest; a
// backup complete already is returned as it is. progress counts the
// stream's bytes before compression.
func (c Config) takeBackup(ctx context.Context, name string, progress *atomic.Int64) (backup.Manifest, error) {
	cfg, err := c.loadBackupConfig()
	if err != nil {
		return backup.Manifest{}, err
	}
	store, err := openStore(ctx, cfg.Storage)
	if err != nil {
		return backup.Manifest{}, err
	}
	if err := backup.Claim(ctx, store, cfg.Owner); err != nil {
		return backup.Manifest{}, err
	}
	var done backup.Manifest
	if err := backup.ReadJSON(ctx, store, backup.ManifestKey(name), &done); err == nil {
		return done, nil
	} else if objstore.KindOf(err) != objstore.NotFound {
		return backup.Manifest{}, err
	}
	// The parts of an attempt cut off (the agent killed) are dropped.
	if err := store.AbortIncomplete(ctx, backup.DataKey(name)); err != nil {
		return backup.Manifest{}, err
	}
	st, err := c.localStatus(ctx)
	if err != nil {
		return backup.Manifest{}, err
	}
	m := backup.Manifest{Name: name, Owner: cfg.Owner, Instance: c.instanceName(), ServerVersion: st.Version.String(),
		BinlogState: st.GTIDBinlogState, Start: time.Now().UTC()}
	file, gtid, tool, err := c.streamBackup(ctx, store, st.Version.Engine, cfg.RateLimit, name, progress)
	if err != nil {
		return backup.Manifest{}, err
	}
	m.Files, m.GTID, m.Tool, m.RawSize, m.End = []backup.File{file}, gtid, tool, progress.Load(), time.Now().UTC()
	if err := backup.PutJSON(ctx, store, backup.ManifestKey(name), m); err != nil {
		return backup.Manifest{}, err
	}
	return m, nil
}

// localStatus reads the instance's status over the socket.
func (c Config) localStatus(ctx context.Context) (*dbop.Status, error) {
	db, err := c.openLocal()
	if err != nil {
		return nil, err
	}
	defer db.Close()
	return db.Status(ctx)
}

// openLocal opens the instance over its socket as dbop.AgentUser.
func (c Config) openLocal() (*dbop.Instance, error) {
	pw, err := c.readSecret(AgentPasswordFile)
	if err != nil {
		return nil, err
	}
	o := dbop.DefaultOptions()
	o.MaxOpen, o.DialTimeout, o.ReadTimeout, o.WriteTimeout = 1, 2*time.Second, 5*time.Second, 5*time.Second
	return dbop.Open(c.Socket, dbop.Credentials{User: dbop.AgentUser, Password: pw}, o)
}

// instanceName is the pod's name: the report host's first label.
func (c Config) instanceName() string {
	name, _, _ := strings.Cut(c.ReportHost, ".")
	if name == "" {
		name, _ = os.Hostname()
	}
	return name
}

// streamBackup runs the backup program into the upload of name's stream
// and returns the stored file, the backup's GTID position and the tool.
func (c Config) streamBackup(ctx context.Context, store *objstore.Store, e dbop.Engine, limit int64, name string,
	progress *atomic.Int64) (backup.File, string, string, error) {
	t := toolsFor(e)
	work, err := os.MkdirTemp("", "backup-")
	if err != nil {
		return backup.File{}, "", "", err
	}
	defer os.RemoveAll(work)
	opts, err := c.optionFile(t.section)
	if err != nil {
		return backup.File{}, "", "", err
	}
	defer os.Remove(opts)
	lsn := filepath.Join(work, "lsn")
	args := t.backupArgs(opts, filepath.Join(work, "tmp"), lsn)
	var file backup.File
	err = runBackupProgram(ctx, args, func(stream io.Reader) error {
		var err error
		file, err = upload(ctx, store, backup.DataKey(name), limited(ctx, counting(stream, progress), limit))
		return err
	})
	if err != nil {
		return backup.File{}, "", "", err
	}
	gtid, err := readBackupGTID(filepath.Join(lsn, "xtrabackup_info"))
	return file, gtid, toolVersion(t.backup), err
}

// upload compresses r into the object name, and returns what was stored.
// An error of r (the backup program's stream) fails the upload: no object.
func upload(ctx context.Context, store *objstore.Store, name string, r io.Reader) (backup.File, error) {
	pr, pw := io.Pipe()
	sum := sha256.New()
	stored := &countWriter{w: io.MultiWriter(pw, sum)}
	go func() { pw.CloseWithError(compress(stored, r)) }()
	err := store.Put(ctx, name, pr, -1)
	pr.CloseWithError(errUploadEnded) // unblock the compressor if Put ended first
	if err != nil {
		return backup.File{}, err
	}
	return backup.File{Name: name, Size: stored.n, SHA256: hex.EncodeToString(sum.Sum(nil))}, nil
}

// errUploadEnded stops a compressor whose upload ended.
var errUploadEnded = errors.New("the upload ended")

// compress writes r to w through zstd.
func compress(w io.Writer, r io.Reader) error {
	enc, err := zstd.NewWriter(w, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(2))
	if err != nil {
		return err
	}
	if _, err := io.Copy(enc, r); err != nil {
		enc.Close()
		return err
	}
	return enc.Close()
}

// countWriter counts what it writes.
type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// counting adds what r reads to n.
func counting(r io.Reader, n *atomic.Int64) io.Reader { return &countReader{r: r, n: n} }

type countReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// limited reads r at most limit bytes per second; 0 is no limit.
func limited(ctx context.Context, r io.Reader, limit int64) io.Reader {
	if limit <= 0 {
		return r
	}
	burst := int(min(limit, 1<<20))
	return &rateReader{ctx: ctx, r: r, l: rate.NewLimiter(rate.Limit(limit), burst), burst: burst}
}

type rateReader struct {
	ctx   context.Context
	r     io.Reader
	l     *rate.Limiter
	burst int
}

func (r *rateReader) Read(p []byte) (int, error) {
	if len(p) > r.burst {
		p = p[:r.burst]
	}
	n, err := r.r.Read(p)
	if n > 0 {
		if werr := r.l.WaitN(r.ctx, n); werr != nil {
			return n, werr
		}
	}
	return n, err
}

// binlogPosRE finds the GTID in xtrabackup_info's binlog_pos line:
// "binlog_pos = filename 'b.000002', position '535', GTID of the last change '0-1-7'".
var binlogPosRE = regexp.MustCompile(`(?m)^binlog_pos = .*GTID of the last change '([^']*)'`)

// readBackupGTID reads the GTID position of a backup from its xtrabackup_info.
func readBackupGTID(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("the backup's metadata: %w", err)
	}
	m := binlogPosRE.FindSubmatch(data)
	if m == nil {
		return "", nil // a server without binary logs: no position
	}
	return strings.Join(strings.Fields(string(m[1])), ""), nil
}

// toolVersion is what program --version prints, or its name.
func toolVersion(program string) string {
	out, err := exec.Command(program, "--version").CombinedOutput()
	if err != nil {
		return program
	}
	return strings.TrimSpace(string(out))
}

// hashing is a reader that hashes what it reads.
type hashing struct {
	r io.Reader
	h hash.Hash
}

func (h *hashing) Read(p []byte) (int, error) {
	n, err := h.r.Read(p)
	h.h.Write(p[:n])
	return n, err
}
