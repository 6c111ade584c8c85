package dbtest

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// TestStartStopRestart starts two servers, checks they run with distinct ports and
// server ids, restarts one after a crash, and checks nothing is left behind.
func TestStartStopRestart(t *testing.T) {
	var dirs []string
	t.Run("servers", func(t *testing.T) {
		servers := Start(t, 2, Config{FirstServerID: 7})
		a, b := servers[0], servers[1]
		if a.Port == b.Port || a.ServerID != 7 || b.ServerID != 8 {
			t.Fatalf("ports %d %d, ids %d %d", a.Port, b.Port, a.ServerID, b.ServerID)
		}
		for _, s := range servers {
			dirs = append(dirs, s.Dir)
			if got := query(t, s, "SELECT @@server_id, @@read_only, @@gtid_strict_mode, @@log_slave_updates"); got != strconv.FormatUint(uint64(s.ServerID), 10)+"\t1\t1\t1" {
				t.Errorf("server %d: variables %q", s.ServerID, got)
			}
		}
		a.Kill()
		if a.Running() {
			t.Fatal("killed server still running")
		}
		if err := handshake(a.Addr()); err == nil {
			t.Fatal("killed server still accepts connections")
		}
		if err := a.Start(); err != nil {
			t.Fatal(err)
		}
		if got := query(t, a, "SELECT @@server_id"); got != "7" {
			t.Errorf("restarted server: server_id %q", got)
		}
	})
	for _, d := range dirs {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("%s left behind (stat: %v)", d, err)
		}
	}
}

// query runs a statement with the mariadb client over the socket as root (no
// password without a bootstrap file) and returns its tab-separated output.
func query(t *testing.T, s *Server, sql string) string {
	t.Helper()
	out, err := exec.Command(Binary(t, "mariadb"), "--no-defaults", "-S", s.Socket, "-uroot", "-N", "-B", "-e", sql).CombinedOutput()
	if err != nil {
		t.Fatalf("mariadb -e %q: %v\n%s", sql, err, out)
	}
	return strings.TrimSpace(string(out))
}
