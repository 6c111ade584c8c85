package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/example/mysql-operator/backup"
	"github.com/example/mysql-operator/dbop"
	"github.com/example/mysql-operator/objstore"
	"github.com/example/mysql-operator/topology"
)

// replayStart bounds the start of the restore's own server: the prepared
// copy needs no crash recovery.
const replayStart = 5 * time.Minute

// replay starts a server of its own on the prepared copy in dir, with no
// network: it gives the copy this MySQL's operator accounts (the backup
// has its source's), sets the GTID history the backup recorded, replays
// the plan's archived binary logs, and shuts down. It returns the GTID
// position reached.
func (c Config) replay(ctx context.Context, store *objstore.Store, plan backup.Plan, dir, server string) (string, error) {
	v, err := serverVersion(server)
	if err != nil {
		return "", err
	}
	if v.Engine != dbop.EngineMariaDB && len(plan.Steps) > 0 {
		return "", errors.New("a restore of MySQL to a point in time is not supported: restore a backup as it is")
	}
	boot, err := c.bootstrapConfig()
	if err != nil {
		return "", err
	}
	srv, err := c.startReplayServer(ctx, server, v, dir, boot)
	if err != nil {
		return "", err
	}
	defer srv.stop()
	if err := setHistory(ctx, srv.db, plan.Backup); err != nil {
		return "", err
	}
	for _, step := range plan.Steps {
		if err := c.replayStep(ctx, store, srv, step, toolsFor(v.Engine)); err != nil {
			return "", err
		}
	}
	pos, err := settle(ctx, srv.db)
	if err != nil {
		return "", err
	}
	return pos, srv.shutdown(ctx)
}

// settle makes a restored MariaDB's replication position its binary log's
// and returns it. The backup's gtid_slave_pos (of the instance it was taken
// on) would otherwise stay behind the replayed transactions, which other
// servers originated: MariaDB's gtid_current_pos, which mariadb-backup
// records when this instance seeds a replica, takes the replication
// position for a domain whose last transaction is not the server's own.
func settle(ctx context.Context, db *dbop.Instance) (string, error) {
	st, err := db.Status(ctx)
	if err != nil {
		return "", err
	}
	if st.Version.Engine != dbop.EngineMariaDB {
		return st.GTIDExecuted, nil
	}
	state, err := topology.ParseMariaDBGTIDSet(st.GTIDBinlogState)
	if err != nil || state.IsEmpty() {
		return st.GTIDCurrentPos, err
	}
	pos := state.Position().String()
	return pos, db.SetGTIDSlavePos(ctx, pos)
}

// setHistory makes the copy's binary log start at the backup's position,
// with the GTID history of its source (dbop.SeedState), so that replayed
// transactions and new ones follow in order.
func setHistory(ctx context.Context, db *dbop.Instance, m backup.Manifest) error {
	if m.GTID == "" {
		return nil
	}
	state, _, err := dbop.SeedState(dbop.BinlogInfo{GTIDs: m.GTID}, m.BinlogState)
	if err != nil {
		return err
	}
	if err := db.ResetBinlogs(ctx); err != nil {
		return err
	}
	return db.SetGTIDBinlogState(ctx, state)
}

// bootstrapConfig reads this MySQL's passwords.
func (c Config) bootstrapConfig() (dbop.BootstrapConfig, error) {
	var cfg dbop.BootstrapConfig
	for _, f := range []struct {
		name string
		to   *string
	}{{RootPasswordFile, &cfg.RootPassword}, {AdminPasswordFile, &cfg.AdminPassword},
		{ReplPasswordFile, &cfg.ReplPassword}, {AgentPasswordFile, &cfg.AgentPassword}} {
		pw, err := c.readSecret(f.name)
		if err != nil {
			return cfg, err
		}
		*f.to = pw
	}
	return cfg, nil
}

// replayServer is the restore's own server.
type replayServer struct {
	cmd    *exec.Cmd
	done   chan struct{}
	db     *dbop.Instance
	socket string
	root   string
}

// startReplayServer starts the server on dir with the restored accounts
// in its init file and waits until root can log in over its socket.
func (c Config) startReplayServer(ctx context.Context, server string, v dbop.Version, dir string, boot dbop.BootstrapConfig) (*replayServer, error) {
	d, err := dbop.DialectFor(v)
	if err != nil {
		return nil, err
	}
	accounts, err := d.RestoreAccounts(boot)
	if err != nil {
		return nil, err
	}
	initFile, err := privateFile("restore-accounts-*.sql", accounts)
	if err != nil {
		return nil, err
	}
	defer os.Remove(initFile) // read at start: gone once root logs in
	run := filepath.Dir(c.Socket)
	s := &replayServer{socket: filepath.Join(run, "restore.sock"), root: boot.RootPassword, done: make(chan struct{})}
	args := []string{"--defaults-file=" + c.ServerConfig, "--datadir=" + dir, "--socket=" + s.socket,
		"--pid-file=" + filepath.Join(run, "restore.pid"), "--skip-networking", "--read-only=OFF", "--skip-slave-start",
		"--init-file=" + initFile}
	args = append(args, toolsFor(v.Engine).noTLS...)
	if os.Geteuid() == 0 {
		// The pods run as mysql; a server started by root (the agent's
		// tests) must be told it may.
		args = append(args, "--user=root")
	}
	s.cmd = exec.Command(server, args...)
	s.cmd.Stdout, s.cmd.Stderr = os.Stderr, os.Stderr
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the restore's server: %w", err)
	}
	go func() { _ = s.cmd.Wait(); close(s.done) }()
	if err := s.waitUp(ctx); err != nil {
		s.stop()
		return nil, err
	}
	return s, nil
}

// waitUp polls until root logs in, or the server exits.
func (s *replayServer) waitUp(ctx context.Context) error {
	db, err := dbop.Open(s.socket, dbop.Credentials{User: "root", Password: s.root}, dbop.DefaultOptions())
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, replayStart)
	defer cancel()
	for {
		if _, err = db.Status(ctx); err == nil {
			s.db = db
			return nil
		}
		select {
		case <-s.done:
			db.Close()
			return fmt.Errorf("the restore's server exited (its log is above): %w", err)
		case <-ctx.Done():
			db.Close()
			return fmt.Errorf("the restore's server did not start in %s: %w", replayStart, err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// shutdown stops the server cleanly and waits for it.
func (s *replayServer) shutdown(ctx context.Context) error {
	if err := s.db.Shutdown(ctx); err != nil {
		return err
	}
	select {
	case <-s.done:
		return nil
	case <-time.After(replayStart):
		return errors.New("the restore's server did not shut down")
	}
}

// stop kills the server if it still runs.
func (s *replayServer) stop() {
	if s.db != nil {
		s.db.Close()
	}
	select {
	case <-s.done:
	default:
		_ = s.cmd.Process.Kill()
		<-s.done
	}
}

// replayStep downloads one archived binary log file, checks it, and pipes
// the binlog program's rendering of the step's window into the client.
func (c Config) replayStep(ctx context.Context, store *objstore.Store, srv *replayServer, step backup.Step, t tools) error {
	file := filepath.Join(filepath.Dir(c.DataDir), "restore.binlog")
	defer os.Remove(file)
	err := download(ctx, store, step.Segment.Object, func(r io.Reader) error {
		f, err := os.OpenFile(file, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
		if err != nil {
			return err
		}
		if _, err := io.Copy(f, r); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	})
	if err != nil {
		return err
	}
	opts, err := privateFile("restore-client-*.cnf", fmt.Sprintf("[client]\nuser=root\npassword=%s\nsocket=%s\n", srv.root, srv.socket))
	if err != nil {
		return err
	}
	defer os.Remove(opts)
	if err := pipe(ctx, t.replayArgs(step, file), t.clientArgs(opts)); err != nil {
		return fmt.Errorf("replay %s/%s: %w", step.Segment.Tenure, step.Segment.BinlogFile, err)
	}
	return nil
}

// pipe runs from | to; binlog programs read times in the local time zone,
// so both run in UTC.
func pipe(ctx context.Context, from, to []string) error {
	src := exec.CommandContext(ctx, from[0], from[1:]...)
	dst := exec.CommandContext(ctx, to[0], to[1:]...)
	src.Env = append(os.Environ(), "TZ=UTC")
	dst.Env = src.Env
	var srcErr, dstErr strings.Builder
	src.Stderr, dst.Stderr = &srcErr, &dstErr
	out, err := src.StdoutPipe()
	if err != nil {
		return err
	}
	dst.Stdin = out
	if err := dst.Start(); err != nil {
		return err
	}
	if err := src.Run(); err != nil {
		_ = dst.Wait()
		return fmt.Errorf("%s: %w: %s", from[0], err, tail([]byte(srcErr.String())))
	}
	if err := dst.Wait(); err != nil {
		return fmt.Errorf("%s: %w: %s", to[0], err, tail([]byte(dstErr.String())))
	}
	if strings.Contains(srcErr.String(), "ERROR:") {
		return fmt.Errorf("%s: %s", from[0], tail([]byte(srcErr.String())))
	}
	return nil
}

// privateFile writes content into a new file of mode 0600 in the temporary
// directory and returns its path.
func privateFile(pattern, content string) (string, error) {
	f, err := os.CreateTemp("", pattern)
	if err != nil {
		return "", err
	}
	defer f.Close()
	_, err = f.WriteString(content)
	return f.Name(), err
}
