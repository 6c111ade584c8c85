package agent

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"

	"github.com/example/mysql-operator/backup"
	"github.com/example/mysql-operator/dbop"
	"github.com/example/mysql-operator/topology"
)

// Verify proves that backup name of the MySQL's storage restores: in a
// scratch pod, it downloads the stream, checks its checksum, extracts and
// prepares it into the data directory (an empty volume), starts a server
// on it with no network, and checks that the server's GTID position is the
// backup's. It returns what it found, for the pod's termination message.
func (c Config) Verify(ctx context.Context, name, server string) (string, error) {
	cfg, err := c.loadBackupConfig()
	if err != nil {
		return "", err
	}
	store, err := openStore(ctx, cfg.Storage)
	if err != nil {
		return "", err
	}
	var m backup.Manifest
	if err := backup.ReadJSON(ctx, store, backup.ManifestKey(name), &m); err != nil {
		return "", err
	}
	v, err := serverVersion(server)
	if err != nil {
		return "", err
	}
	if c.PodConf != "" {
		// The operator's my.cnf includes the pod's own settings.
		if err := os.WriteFile(c.PodConf, []byte("[mysqld]\nserver_id = 1\n"), 0o644); err != nil {
			return "", err
		}
	}
	if err := c.fetchBackup(ctx, store, m, c.DataDir, v.Engine); err != nil {
		return "", err
	}
	srv, err := c.startReplayServer(ctx, server, v, c.DataDir, scratchPasswords())
	if err != nil {
		return "", err
	}
	defer srv.stop()
	if err := setHistory(ctx, srv.db, m); err != nil {
		return "", err
	}
	st, err := srv.db.Status(ctx)
	if err != nil {
		return "", err
	}
	got, want := positionOf(st), m.GTID
	if err := samePosition(st.Flavor(), got, want); err != nil {
		return "", fmt.Errorf("backup %s: the restored server is at GTID %s, the manifest says %s: %w", name, got, want, err)
	}
	if err := srv.shutdown(ctx); err != nil {
		return "", err
	}
	return fmt.Sprintf("backup %s restored: %s prepared and started at GTID %s", name, st.Version, want), nil
}

// positionOf is the GTID position of a server.
func positionOf(st *dbop.Status) string {
	if st.Version.Engine == dbop.EngineMariaDB {
		return st.GTIDCurrentPos
	}
	return st.GTIDExecuted
}

// samePosition says whether two GTID positions of flavor f are one.
func samePosition(f topology.Flavor, got, want string) error {
	g, err := topology.ParseGTIDSet(f, got)
	if err != nil {
		return err
	}
	w, err := topology.ParseGTIDSet(f, want)
	if err != nil {
		return err
	}
	if !g.Contains(w) || !w.Contains(g) {
		return fmt.Errorf("positions differ")
	}
	return nil
}

// scratchPasswords are random passwords of the verifying server's
// accounts: nobody logs in to it but the agent, over its socket.
func scratchPasswords() dbop.BootstrapConfig {
	pw := func() string {
		b := make([]byte, 16)
		_, _ = rand.Read(b)
		return hex.EncodeToString(b)
	}
	return dbop.BootstrapConfig{RootPassword: pw(), AdminPassword: pw(), ReplPassword: pw(), AgentPassword: pw()}
}

// WriteResult writes a verification's result to path (the container's
// termination message), and returns err.
func WriteResult(path, result string, err error) error {
	if err != nil {
		result = "agent verify: " + err.Error()
	}
	if werr := os.WriteFile(path, []byte(result), 0o644); werr != nil && err == nil {
		return werr
	}
	return err
}
