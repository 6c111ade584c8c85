// Package dbtest starts real MariaDB servers for tests: each mariadbd process runs
// on 127.0.0.1 on a free port, with its own temporary directory (data directory
// initialised by mariadb-install-db, socket, my.cnf, logs), and is killed at the end
// of the test. Directories are removed unless the test failed, in which case their
// path and the tail of the error log are logged.
//
// The configuration is the one the operator runs replication with: binary log,
// log_slave_updates, ROW format, gtid_strict_mode, distinct server_id, read_only
// and skip_slave_start. The binaries come from Debian's mariadb-server,
// mariadb-client and mariadb-backup packages; a test fails (it is not skipped) when
// they are missing.
package dbtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Config describes the servers to start.
type Config struct {
	// Bootstrap, when not empty, is the SQL passed to mariadb-install-db with
	// --extra-file (see dbop.Dialect.Bootstrap).
	Bootstrap string
	// FirstServerID is the server_id of the first server (default 1); the others
	// follow.
	FirstServerID uint32
	// ExtraConfig are more [mysqld] lines for my.cnf ("key=value").
	ExtraConfig []string
	// Hosts, when set, are the loopback addresses the servers listen on,
	// one per server, all on port 3306, as pods of one address each do;
	// by default every server listens on 127.0.0.1 on a free port.
	Hosts []string
}

// binaries are the programs this package runs, by name.
var binaries = struct {
	sync.Once
	paths map[string]string
	err   error
}{}

// lookPath finds a MariaDB program in PATH or in /usr/sbin and /usr/bin.
func lookPath(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	for _, dir := range []string{"/usr/sbin", "/usr/bin", "/usr/local/bin"} {
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not found in PATH, /usr/sbin or /usr/bin", name)
}

// Binary returns the path of a MariaDB program (mariadbd, mariadb-install-db,
// mariadb-backup, mbstream, mariadb), failing the test with the remedy when it is
// missing.
func Binary(t testing.TB, name string) string {
	t.Helper()
	binaries.Do(func() {
		binaries.paths = map[string]string{}
		var missing []string
		for _, n := range []string{"mariadbd", "mariadb-install-db", "mariadb-backup", "mbstream", "mariadb"} {
			p, err := lookPath(n)
			if err != nil {
				missing = append(missing, n)
				continue
			}
			binaries.paths[n] = p
		}
		if len(missing) > 0 {
			binaries.err = fmt.Errorf("%s not found: install mariadb-server, mariadb-client and mariadb-backup: make deps "+
				"(apt-get install -y mariadb-server mariadb-client mariadb-backup)", strings.Join(missing, ", "))
		}
	})
	p, ok := binaries.paths[name]
	if !ok {
		if binaries.err != nil {
			t.Fatal(binaries.err)
		}
		t.Fatalf("dbtest: unknown program %q", name)
	}
	return p
}

// Start starts n servers with server_id FirstServerID.. in parallel and waits until
// every one accepts connections. The test fails if any cannot start.
func Start(t testing.TB, n int, cfg Config) []*Server {
	t.Helper()
	Binary(t, "mariadbd")
	if cfg.FirstServerID == 0 {
		cfg.FirstServerID = 1
	}
	servers := make([]*Server, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			servers[i], errs[i] = newServer(t, cfg.FirstServerID+uint32(i), cfg.forServer(i), "")
		})
	}
	wg.Wait()
	for _, s := range servers {
		if s != nil {
			registerCleanup(t, s)
		}
	}
	for i, err := range errs {
		if err != nil {
			t.Fatalf("dbtest: start server %d: %v", i, err)
		}
	}
	return servers
}

// forServer returns the configuration of the i-th server: its own host
// when Hosts are given.
func (c Config) forServer(i int) Config {
	if i < len(c.Hosts) {
		c.Hosts = []string{c.Hosts[i]}
	} else {
		c.Hosts = nil
	}
	return c
}

// StartFromDataDir starts one server on an existing data directory (a prepared
// backup, see Backup), which it takes over and removes at the end of the test.
func StartFromDataDir(t testing.TB, dataDir string, serverID uint32, cfg Config) *Server {
	t.Helper()
	Binary(t, "mariadbd")
	s, err := newServer(t, serverID, cfg, dataDir)
	if s != nil {
		registerCleanup(t, s)
	}
	if err != nil {
		t.Fatalf("dbtest: start server on %s: %v", dataDir, err)
	}
	return s
}

// registerCleanup kills s at the end of the test and removes its directory, or
// keeps it and shows the log tail when the test failed.
func registerCleanup(t testing.TB, s *Server) {
	t.Cleanup(func() {
		s.Kill()
		if t.Failed() {
			t.Logf("dbtest: server %d kept in %s; error log tail:\n%s", s.ServerID, s.Dir, s.LogTail(20))
			return
		}
		if err := os.RemoveAll(s.Dir); err != nil {
			t.Errorf("dbtest: remove %s: %v", s.Dir, err)
		}
	})
}
