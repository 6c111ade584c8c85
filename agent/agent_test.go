package agent

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/example/mysql-operator/dbop"
)

// TestCheckServer: init lets through the engine and major.minor the spec
// names, and otherwise says what the image runs instead.
func TestCheckServer(t *testing.T) {
	maria := dbop.Version{Engine: dbop.EngineMariaDB, Major: 10, Minor: 11, Patch: 14}
	mysql := dbop.Version{Engine: dbop.EngineMySQL, Major: 8, Minor: 4, Patch: 3}
	cases := []struct {
		engine, version string
		v               dbop.Version
		want            string // "" for accepted, else part of the error
	}{
		{"MariaDB", "10.11", maria, ""},
		{"", "", mysql, ""},
		{"MySQL", "8.4", mysql, ""},
		{"MariaDB", "10.11", mysql, "the image's server is MySQL 8.4.3 (/usr/sbin/mysqld), but spec.engine is MariaDB and spec.version 10.11"},
		{"MariaDB", "11.4", maria, "the image's server is MariaDB 10.11.14"},
		{"MySQL", "9.7", mysql, "spec.version 9.7"},
	}
	for _, tt := range cases {
		err := Config{Engine: tt.engine, EngineVersion: tt.version}.checkServer("/usr/sbin/mysqld", tt.v)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s %s on %s: %v", tt.engine, tt.version, tt.v, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s %s on %s: %v, want it to say %q", tt.engine, tt.version, tt.v, err, tt.want)
		}
	}
}

// TestCrash kills the process of the pid file with SIGKILL, and says so
// when the file does not name a process it can kill.
func TestCrash(t *testing.T) {
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(t.TempDir(), "mysqld.pid")
	if err := os.WriteFile(pidFile, []byte(strconv.Itoa(cmd.Process.Pid)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := (Config{PidFile: pidFile}).Crash(); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if err == nil || !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("the server ended with %v (%v), want killed by SIGKILL", cmd.ProcessState, err)
	}
	c := Config{PidFile: pidFile}
	for i, want := range []string{"--rpl-semi-sync-slave-enabled=ON", ""} {
		args, err := c.recoveryArgs("/usr/sbin/mariadbd")
		if err != nil || strings.Join(args, " ") != want {
			t.Errorf("start %d after the crash: %q, %v; want %q", i+1, args, err, want)
		}
	}
	if err := c.Crash(); err != nil {
		t.Errorf("a server gone already: %v", err)
	}
	if args, err := c.recoveryArgs("/usr/sbin/mysqld"); err != nil || args != nil {
		t.Errorf("MySQL after a crash: %q, %v; want no option (it has no such recovery)", args, err)
	}
	if err := os.WriteFile(pidFile, []byte("1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := (Config{PidFile: pidFile}).Crash(); err == nil || !strings.Contains(err.Error(), "not a server's pid") {
		t.Errorf("pid 1: %v", err)
	}
	if err := (Config{PidFile: pidFile + ".missing"}).Crash(); err == nil {
		t.Error("a missing pid file crashed something")
	}
}
