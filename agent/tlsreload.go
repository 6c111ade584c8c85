package agent

import (
	"bytes"
	"context"
	"crypto/sha256"
	"log/slog"
	"os"
	"path/filepath"
	"time"
)

// The certificate's reload: the kubelet swaps the files of a renewed
// certificate into the TLS directory (a Secret volume, never mounted by
// subPath), and the agent, which sees them change, has its server read
// them again (FLUSH SSL, ALTER INSTANCE RELOAD TLS) without a restart.
// Established connections keep the certificate they began with.

// tlsFiles are the files of the TLS directory whose change is reloaded.
var tlsFiles = []string{"tls.crt", "tls.key", "ca.crt"}

// tlsPollInterval is how often the agent looks at the files: the kubelet
// itself refreshes a Secret volume only every minute or so.
const tlsPollInterval = 10 * time.Second

// tlsReloader reloads the server's certificate when its files change.
type tlsReloader struct {
	c   Config
	log *slog.Logger
	// loaded is the digest of the files the server last read: those at the
	// agent's start, which the server started with, or the last reloaded.
	loaded []byte
}

// run watches the files until ctx ends.
func (t *tlsReloader) run(ctx context.Context) {
	t.loaded = t.digest()
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(tlsPollInterval):
		}
		if err := t.check(ctx); err != nil {
			t.log.Error("reload the TLS certificate", "err", err)
		}
	}
}

// check reloads the certificate if its files changed since the last load;
// a failed reload is tried again at the next poll.
func (t *tlsReloader) check(ctx context.Context) error {
	now := t.digest()
	if now == nil || bytes.Equal(now, t.loaded) {
		return nil
	}
	db, err := t.c.openLocal()
	if err != nil {
		return err
	}
	defer db.Close()
	if err := db.ReloadTLS(ctx); err != nil {
		return err
	}
	t.loaded = now
	t.log.Info("reloaded the TLS certificate", "dir", t.c.TLSDir)
	return nil
}

// digest is the SHA-256 of the files, nil when one cannot be read (the
// kubelet between two writes, or no certificate yet).
func (t *tlsReloader) digest() []byte {
	h := sha256.New()
	for _, f := range tlsFiles {
		b, err := os.ReadFile(filepath.Join(t.c.TLSDir, f))
		if err != nil {
			return nil
		}
		h.Write(b)
	}
	return h.Sum(nil)
}
