package agent

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"time"

	"github.com/example/mysql-operator/backup"
	"github.com/example/mysql-operator/dbop"
	"github.com/example/mysql-operator/objstore"
	"github.com/example/mysql-operator/topology"
)

// The binary log archive: while its server is the primary (writable), the
// agent copies each closed binary log file to binlogs/<tenure>/ with its
// index, and closes the file being written (FLUSH BINARY LOGS) once a
// transaction in it has waited most of the configured delay. A tenure
// begins when the agent first sees its server writable; its files start
// with every closed file on the server, those it wrote as a replica
// included, so that a restore can follow the new primary's history from
// wherever its files begin (backup.NewPlan). While nothing is written, a
// head records how recent the archive is, once per delay.

// ArchiveStatus is the state of the agent's archive.
type ArchiveStatus struct {
	// Tenure is the current tenure, empty when the server is not the primary.
	Tenure string `json:"tenure,omitempty"`
	// Position is the binlog state archived so far in the tenure.
	Position string `json:"position,omitempty"`
	// Archived is when the archive last caught up with the server.
	Archived time.Time `json:"archived,omitzero"`
	// Files is how many files the tenure archived.
	Files int `json:"files"`
	// Error is the last failure, cleared by a success.
	Error string `json:"error,omitempty"`
}

// archiver is the agent's archive loop.
type archiver struct {
	c   Config
	log *slog.Logger
	mu  sync.Mutex
	st  ArchiveStatus
	// archived are the files copied in this tenure.
	archived map[string]bool
	// pendingSince is when a transaction beyond Position was first seen.
	pendingSince time.Time
	// head is when the head was last written.
	head time.Time
	// store is the storage's client, kept while its config is the same:
	// an idle round sends it nothing.
	store    *objstore.Store
	storeCfg objstore.Config
	// listed says the files were listed in this tenure: while the archive
	// holds the server's position, a round does not list them again.
	listed bool
	// db is the connection to the local server, kept across rounds and
	// dropped after a failed one.
	db *dbop.Instance
}

// status returns the archive's state.
func (a *archiver) status() ArchiveStatus {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.st
}

// run archives until ctx ends, a round per poll interval.
func (a *archiver) run(ctx context.Context) {
	for {
		wait := time.Second
		if cfg, err := a.c.loadBackupConfig(); err == nil && cfg.ArchiveMaxDelay > 0 {
			wait = pollInterval(time.Duration(cfg.ArchiveMaxDelay))
			err = a.round(ctx, cfg)
			a.record(err)
			if err != nil {
				a.closeLocal()
			}
		}
		select {
		case <-ctx.Done():
			a.closeLocal()
			return
		case <-time.After(wait):
		}
	}
}

// pollInterval is how often the archive looks at the server: a quarter of
// the delay, between one and five seconds.
func pollInterval(delay time.Duration) time.Duration {
	return min(max(delay/4, time.Second), 5*time.Second)
}

// record keeps the outcome of a round, logging a new error once.
func (a *archiver) record(err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	if msg != "" && msg != a.st.Error {
		a.log.Error("binary log archive", "err", msg)
	}
	a.st.Error = msg
}

// round archives what is due: the closed files not yet archived, the file
// being written once its oldest unarchived transaction waited long enough,
// and the head while nothing is written.
func (a *archiver) round(ctx context.Context, cfg backup.PodConfig) error {
	db, err := a.local()
	if err != nil {
		return err
	}
	st, err := db.Status(ctx)
	if err != nil {
		return err
	}
	if st.ReadOnly {
		a.endTenure()
		return nil
	}
	store, err := a.storeOf(ctx, cfg.Storage)
	if err != nil {
		return err
	}
	if err := a.beginTenure(ctx, store, cfg.Owner); err != nil {
		return err
	}
	current, err := topology.ParseMariaDBGTIDSet(st.GTIDBinlogState)
	if err != nil {
		return err
	}
	if a.status().Position != current.String() || !a.listed {
		if err := a.archiveClosed(ctx, db, store); err != nil {
			return err
		}
		a.listed = true
	}
	return a.rotateOrHead(ctx, db, store, current, time.Duration(cfg.ArchiveMaxDelay))
}

// local returns the connection to the local server, opened if need be.
func (a *archiver) local() (*dbop.Instance, error) {
	if a.db == nil {
		db, err := a.c.openLocal()
		if err != nil {
			return nil, err
		}
		a.db = db
	}
	return a.db, nil
}

// closeLocal closes the connection to the local server, if open.
func (a *archiver) closeLocal() {
	if a.db != nil {
		_ = a.db.Close()
		a.db = nil
	}
}

// storeOf returns the client of cfg, made (and its bucket checked) when
// the config changed.
func (a *archiver) storeOf(ctx context.Context, cfg objstore.Config) (*objstore.Store, error) {
	if a.store != nil && reflect.DeepEqual(cfg, a.storeCfg) {
		return a.store, nil
	}
	s, err := openStore(ctx, cfg)
	if err != nil {
		return nil, err
	}
	a.store, a.storeCfg = s, cfg
	return s, nil
}

// endTenure forgets the tenure: the server is not the primary.
func (a *archiver) endTenure() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.st.Tenure != "" {
		a.log.Info("binary log archive: tenure ended", "tenure", a.st.Tenure)
	}
	a.st = ArchiveStatus{}
	a.archived, a.pendingSince, a.head, a.listed = nil, time.Time{}, time.Time{}, false
}

// beginTenure starts a tenure when there is none, once the prefix is this
// MySQL's.
func (a *archiver) beginTenure(ctx context.Context, store *objstore.Store, owner backup.Owner) error {
	a.mu.Lock()
	begun := a.st.Tenure != ""
	a.mu.Unlock()
	if begun {
		return nil
	}
	if err := backup.Claim(ctx, store, owner); err != nil {
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.st = ArchiveStatus{Tenure: backup.TenureName(time.Now(), a.c.instanceName())}
	a.archived = map[string]bool{}
	a.log.Info("binary log archive: tenure began", "tenure", a.st.Tenure)
	return nil
}

// archiveClosed copies every closed file not archived yet, oldest first.
func (a *archiver) archiveClosed(ctx context.Context, db *dbop.Instance, store *objstore.Store) error {
	logs, err := db.BinaryLogs(ctx)
	if err != nil || len(logs) < 2 {
		return err
	}
	dir, err := db.BinaryLogDir(ctx)
	if err != nil {
		return err
	}
	for _, l := range logs[:len(logs)-1] {
		if a.archived[l.Name] {
			continue
		}
		seg, err := archiveFile(ctx, store, a.st.Tenure, filepath.Join(dir, l.Name))
		if err != nil {
			return err
		}
		a.mu.Lock()
		a.archived[l.Name] = true
		a.st.Position, a.st.Files = seg.End, a.st.Files+1
		a.mu.Unlock()
	}
	return nil
}

// rotateOrHead closes the file being written, and archives it, when a
// transaction in it may be archived later than delay otherwise: it was
// first seen up to a poll interval after its commit, and the next round
// comes a poll interval later, so the file is closed two intervals and a
// second (for the upload) before delay. It writes the head once per delay
// while the archive holds everything.
func (a *archiver) rotateOrHead(ctx context.Context, db *dbop.Instance, store *objstore.Store, current topology.MariaDBGTIDSet, delay time.Duration) error {
	now := time.Now()
	a.mu.Lock()
	caughtUp := current.String() == a.st.Position
	if caughtUp {
		a.pendingSince, a.st.Archived = time.Time{}, now
	} else if a.pendingSince.IsZero() {
		a.pendingSince = now
	}
	pending, headDue := a.pendingSince, caughtUp && now.Sub(a.head) >= delay
	tenure, position := a.st.Tenure, a.st.Position
	a.mu.Unlock()
	switch {
	case !caughtUp && now.Sub(pending)+2*pollInterval(delay)+time.Second >= delay:
		if err := db.RotateBinaryLog(ctx); err != nil {
			return err
		}
		return a.archiveClosed(ctx, db, store)
	case headDue:
		head := backup.Segment{Tenure: tenure, BinlogFile: backup.HeadFile, Start: position, End: position, Last: now.UTC()}
		if err := backup.PutJSON(ctx, store, backup.SegmentIndexKey(tenure, backup.HeadFile), head); err != nil {
			return err
		}
		a.mu.Lock()
		a.head = now
		a.mu.Unlock()
	}
	return nil
}

// archiveFile copies the closed binary log file path, compressed, and
// then its index, which it reads from the file on the way (backup.Scan).
func archiveFile(ctx context.Context, store *objstore.Store, tenure, path string) (backup.Segment, error) {
	f, err := os.Open(path)
	if err != nil {
		return backup.Segment{}, err
	}
	defer f.Close()
	name := filepath.Base(path)
	pr, pw := io.Pipe()
	scanned := make(chan scanResult, 1)
	go func() {
		s, err := backup.Scan(pr)
		_, _ = io.Copy(io.Discard, pr) // a scan that failed early still lets the upload read on
		scanned <- scanResult{s, err}
	}()
	var raw countWriter
	raw.w = pw
	file, err := upload(ctx, store, backup.SegmentDataKey(tenure, name), io.TeeReader(f, &raw))
	pw.CloseWithError(err)
	res := <-scanned
	switch {
	case err != nil:
		return backup.Segment{}, err
	case res.err != nil:
		return backup.Segment{}, fmt.Errorf("read %s: %w", path, res.err)
	case !res.s.Closed:
		return backup.Segment{}, fmt.Errorf("%s is not closed: it ends without a rotation", path)
	}
	seg := backup.Segment{Tenure: tenure, BinlogFile: name, Start: res.s.Start.String(), End: res.s.End.String(),
		First: res.s.First, Last: res.s.Last, Transactions: res.s.Transactions, RawSize: raw.n, Object: file}
	return seg, backup.PutJSON(ctx, store, backup.SegmentIndexKey(tenure, name), seg)
}

// scanResult is what the scan of a file being uploaded found.
type scanResult struct {
	s   backup.Summary
	err error
}
