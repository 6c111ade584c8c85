package agent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/example/mysql-operator/backup"
	"github.com/example/mysql-operator/dbop"
	"github.com/example/mysql-operator/objstore"
)

// A restore makes instance 0's data directory of a new MySQL from a
// backup, and replays archived binary logs up to a point in time or a
// GTID: in its init container, before the server ever starts. Everything
// happens in restore.tmp beside the data directory, which is renamed into
// place at the end: a restore that fails (a file missing or corrupt, a
// point outside the archive) leaves the volume without a data directory
// and says why; it is never done over a data directory.

// RestoreResult is what a restore reached, kept in the data volume.
type RestoreResult struct {
	// Backup is the backup restored.
	Backup string `json:"backup"`
	// Target is what was asked.
	Target backup.Target `json:"target"`
	// GTID is the position reached.
	GTID string `json:"gtid"`
	// Replayed is how many archived binary log files were replayed.
	Replayed int `json:"replayed"`
	// Completed is when the restore ended.
	Completed time.Time `json:"completed"`
}

// restoredFile marks a data directory made by a restore.
func (c Config) restoredFile() string { return filepath.Join(filepath.Dir(c.DataDir), "restored.json") }

// restoreTmp is where a restore builds the data directory.
func (c Config) restoreTmp() string { return c.DataDir + ".restore" }

// Restored reads the result of the restore that made the data directory;
// found is false when no restore made it.
func (c Config) Restored() (r RestoreResult, found bool, err error) {
	data, err := os.ReadFile(c.restoredFile())
	if errors.Is(err, os.ErrNotExist) {
		return r, false, nil
	}
	if err != nil {
		return r, false, err
	}
	return r, true, json.Unmarshal(data, &r)
}

// restoreWanted says whether init restores: on instance 0 of a MySQL made
// from a backup, until a restore made its data directory, and never once
// the operator saw the restore complete (an instance 0 that lost its
// volume later is seeded like any other). A data directory that no
// restore made is refused: a restore never replaces one.
func (c Config) restoreWanted(hostname string) (bool, error) {
	if c.RestoreDir == "" {
		return false, nil
	}
	if ordinal, err := ordinalOf(hostname); err != nil || ordinal != 0 {
		return false, err
	}
	var cfg backup.RestoreConfig
	if err := loadStorageConfig(c.RestoreDir, backup.RestoreFile, &cfg, &cfg.Storage); err != nil || cfg.Done {
		return false, err
	}
	if _, err := os.Stat(c.DataDir); errors.Is(err, os.ErrNotExist) {
		return true, nil
	}
	if _, found, err := c.Restored(); err != nil || found {
		return false, err
	}
	return false, fmt.Errorf("the data volume holds a data directory (%s): a restore never replaces one; delete this instance's PersistentVolumeClaim to restore into an empty volume", c.DataDir)
}

// restore makes the data directory from the configured backup.
func (c Config) restore(ctx context.Context, server string, v dbop.Version) error {
	var cfg backup.RestoreConfig
	if err := loadStorageConfig(c.RestoreDir, backup.RestoreFile, &cfg, &cfg.Storage); err != nil {
		return err
	}
	store, err := openStore(ctx, cfg.Storage)
	if err != nil {
		return err
	}
	backups, segments, err := backup.Catalog(ctx, store)
	if err != nil {
		return err
	}
	plan, err := backup.NewPlan(backups, segments, cfg.Target)
	if err != nil {
		return fmt.Errorf("restore from %s: %w", cfg.Storage.Location(), err)
	}
	tmp := c.restoreTmp()
	if err := os.RemoveAll(tmp); err != nil {
		return err
	}
	if err := c.fetchBackup(ctx, store, plan.Backup, tmp, v.Engine); err != nil {
		_ = os.RemoveAll(tmp)
		return err
	}
	gtid, err := c.replay(ctx, store, plan, tmp, server)
	if err != nil {
		_ = os.RemoveAll(tmp)
		return err
	}
	if err := os.Rename(tmp, c.DataDir); err != nil {
		return err
	}
	res := RestoreResult{Backup: plan.Backup.Name, Target: cfg.Target, GTID: gtid, Replayed: len(plan.Steps), Completed: time.Now().UTC()}
	return os.WriteFile(c.restoredFile(), backup.Marshal(res), 0o600)
}

// fetchBackup downloads, checks, extracts and prepares backup m into dir.
func (c Config) fetchBackup(ctx context.Context, store *objstore.Store, m backup.Manifest, dir string, e dbop.Engine) error {
	if len(m.Files) != 1 {
		return fmt.Errorf("backup %s lists %d files, want its stream only", m.Name, len(m.Files))
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return err
	}
	t := toolsFor(e)
	err := download(ctx, store, m.Files[0], func(r io.Reader) error { return t.extract(r, dir) })
	if err != nil {
		return err
	}
	return t.prepare(dir)
}

// download streams f, decompressed, into consume, and checks its size and
// SHA-256 against what was recorded when it was stored.
func download(ctx context.Context, store *objstore.Store, f backup.File, consume func(io.Reader) error) error {
	body, err := store.Get(ctx, f.Name)
	if err != nil {
		return err
	}
	defer body.Close()
	sum := sha256.New()
	counted := &countWriter{w: sum}
	dec, err := zstd.NewReader(io.TeeReader(body, counted), zstd.WithDecoderConcurrency(2))
	if err != nil {
		return err
	}
	defer dec.Close()
	consumeErr := consume(dec)
	// Read what the consumer left (a trailer), so that the sum covers the
	// whole object.
	_, _ = io.Copy(io.Discard, io.TeeReader(body, counted))
	got := hex.EncodeToString(sum.Sum(nil))
	if counted.n != f.Size || got != f.SHA256 {
		return fmt.Errorf("%s is corrupt: %d bytes of SHA-256 %s, but %d bytes of SHA-256 %s were stored",
			store.URL(f.Name), counted.n, got, f.Size, f.SHA256)
	}
	if consumeErr != nil {
		return fmt.Errorf("%s: %w", store.URL(f.Name), consumeErr)
	}
	return nil
}
