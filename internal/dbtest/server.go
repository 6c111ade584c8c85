package dbtest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/example/mysql-operator/internal/testenv"
)

// startTimeout bounds the wait for a server to accept connections.
const startTimeout = 60 * time.Second

// Server is one running mariadbd.
type Server struct {
	// ServerID is the server's server_id.
	ServerID uint32
	// Host is the address the server listens on, 127.0.0.1 by default.
	Host string
	// Port is the TCP port on Host.
	Port int
	// Dir holds everything of this server; DataDir, Socket and LogFile are in it.
	Dir string
	// DataDir is the data directory.
	DataDir string
	// Socket is the unix socket path.
	Socket string
	// LogFile is the server's error log.
	LogFile string

	cfg  Config
	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd exits
}

// Addr returns "<host>:<port>".
func (s *Server) Addr() string { return net.JoinHostPort(s.Host, strconv.Itoa(s.Port)) }

// newServer creates the directory, initialises (or adopts) the data directory and
// starts the server. On error the returned server, if any, must still be cleaned.
func newServer(t testing.TB, id uint32, cfg Config, dataDir string) (*Server, error) {
	dir, err := os.MkdirTemp(shortTempDir(), "dbtest-")
	if err != nil {
		return nil, err
	}
	s := &Server{ServerID: id, Host: "127.0.0.1", Dir: dir, DataDir: filepath.Join(dir, "data"),
		Socket: filepath.Join(dir, "mysqld.sock"), LogFile: filepath.Join(dir, "error.log"), cfg: cfg}
	if len(cfg.Hosts) == 1 {
		s.Host, s.Port = cfg.Hosts[0], 3306
	}
	if dataDir != "" {
		if err := os.Rename(dataDir, s.DataDir); err != nil {
			return s, fmt.Errorf("adopt data directory: %w", err)
		}
		if err := os.Mkdir(filepath.Join(s.Dir, "tmp"), 0o700); err != nil {
			return s, err
		}
	} else if err := s.install(); err != nil {
		return s, err
	}
	return s, s.Start()
}

// shortTempDir returns a temporary directory short enough for unix socket paths
// (at most 107 bytes).
func shortTempDir() string {
	if d := os.TempDir(); len(d) < 60 {
		return d
	}
	return "/tmp"
}

// writeConfig writes my.cnf for the current port.
func (s *Server) writeConfig() error {
	lines := []string{
		"[mysqld]",
		"datadir=" + s.DataDir,
		"socket=" + s.Socket,
		"port=" + strconv.Itoa(s.Port),
		"bind-address=" + s.Host,
		"pid-file=" + filepath.Join(s.Dir, "mysqld.pid"),
		"log_error=" + s.LogFile,
		"tmpdir=" + filepath.Join(s.Dir, "tmp"),
		"server_id=" + strconv.FormatUint(uint64(s.ServerID), 10),
		"log_bin=mysql-bin",
		"relay_log=relay-bin",
		"log_slave_updates=ON",
		"binlog_format=ROW",
		"gtid_strict_mode=ON",
		"read_only=ON",
		"skip_slave_start=ON",
		"skip_name_resolve=ON",
		"performance_schema=OFF",
		"innodb_buffer_pool_size=16M",
		"innodb_log_file_size=16M",
		"max_connections=64",
	}
	lines = append(lines, s.cfg.ExtraConfig...)
	return os.WriteFile(filepath.Join(s.Dir, "my.cnf"), []byte(strings.Join(lines, "\n")+"\n"), 0o600)
}

// userArgs is --user=root when running as root (mariadbd refuses root otherwise).
func userArgs() []string {
	if os.Geteuid() == 0 {
		return []string{"--user=root"}
	}
	return nil
}

// install runs mariadb-install-db, with the bootstrap file if configured.
func (s *Server) install() error {
	if err := s.writeConfig(); err != nil {
		return err
	}
	if err := os.Mkdir(filepath.Join(s.Dir, "tmp"), 0o700); err != nil {
		return err
	}
	args := append([]string{"--defaults-file=" + filepath.Join(s.Dir, "my.cnf")}, userArgs()...)
	args = append(args, "--auth-root-authentication-method=normal")
	if s.cfg.Bootstrap != "" {
		f := filepath.Join(s.Dir, "bootstrap.sql")
		if err := os.WriteFile(f, []byte(s.cfg.Bootstrap), 0o600); err != nil {
			return err
		}
		args = append(args, "--extra-file="+f)
	}
	out, err := exec.Command(binaries.paths["mariadb-install-db"], args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("mariadb-install-db: %w\n%s", err, tail(out, 20))
	}
	return nil
}

// Start starts the server (again, after Kill or Stop) and waits until it accepts
// connections. A port taken meanwhile by another process is replaced.
func (s *Server) Start() error { return s.StartWith() }

// StartWith is Start with more command-line options for this start only, as
// the agent passes after a crash it caused (--init-rpl-role=SLAVE).
func (s *Server) StartWith(args ...string) error {
	var err error
	for range 3 {
		if s.Port == 0 || (err != nil && len(s.cfg.Hosts) == 0) {
			if s.Port, err = testenv.FreePort(); err != nil {
				return err
			}
		}
		if err = s.writeConfig(); err != nil {
			return err
		}
		if err = s.startOnce(args); err == nil || !strings.Contains(s.LogTail(10), "Address already in use") {
			return err
		}
	}
	return err
}

// startOnce launches mariadbd and waits for it.
func (s *Server) startOnce(extra []string) error {
	args := append([]string{"--defaults-file=" + filepath.Join(s.Dir, "my.cnf")}, userArgs()...)
	cmd := exec.Command(binaries.paths["mariadbd"], append(args, extra...)...)
	out, err := os.OpenFile(filepath.Join(s.Dir, "stdout.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer func() { _ = out.Close() }()
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start mariadbd: %w", err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	s.mu.Lock()
	s.cmd, s.done = cmd, done
	s.mu.Unlock()
	return s.waitReady(done)
}

// waitReady polls until the server sends its handshake on the TCP port, the
// process exits, or startTimeout passes.
func (s *Server) waitReady(done chan struct{}) error {
	deadline := time.Now().Add(startTimeout)
	for {
		select {
		case <-done:
			return fmt.Errorf("mariadbd exited during startup; error log:\n%s", s.LogTail(20))
		default:
		}
		if handshake(s.Addr()) == nil {
			return nil
		}
		if time.Now().After(deadline) {
			s.Kill()
			return fmt.Errorf("mariadbd not ready after %s; error log:\n%s", startTimeout, s.LogTail(20))
		}
		select {
		case <-done:
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// handshake connects to addr and reads the server's initial handshake packet
// (protocol version 10).
func handshake(addr string) error {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return err
	}
	defer func() { _ = c.Close() }()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	hdr := make([]byte, 5)
	if _, err := io.ReadFull(c, hdr); err != nil {
		return err
	}
	if hdr[4] != 10 {
		return fmt.Errorf("unexpected handshake (first byte %d)", hdr[4])
	}
	return nil
}

// Running reports whether the server process is alive.
func (s *Server) Running() bool {
	s.mu.Lock()
	done := s.done
	s.mu.Unlock()
	if done == nil {
		return false
	}
	select {
	case <-done:
		return false
	default:
		return true
	}
}

// Kill kills the server process at once (a crash) and waits for it to exit.
func (s *Server) Kill() { s.signal(syscall.SIGKILL) }

// Stop shuts the server down cleanly (SIGTERM) and waits for it to exit, killing
// it if it takes longer than a minute.
func (s *Server) Stop() { s.signal(syscall.SIGTERM) }

// signal sends sig and waits for the exit.
func (s *Server) signal(sig syscall.Signal) {
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.mu.Unlock()
	if cmd == nil || cmd.Process == nil {
		return
	}
	_ = cmd.Process.Signal(sig)
	select {
	case <-done:
	case <-time.After(time.Minute):
		_ = cmd.Process.Kill()
		<-done
	}
}

// LogTail returns the last n lines of the error log.
func (s *Server) LogTail(n int) string {
	b, err := os.ReadFile(s.LogFile)
	if err != nil {
		return "(no error log: " + err.Error() + ")"
	}
	return tail(b, n)
}

// tail returns the last n lines of b.
func tail(b []byte, n int) string {
	lines := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

// errNotRunning is returned by operations that need a running server.
var errNotRunning = errors.New("server not running")
