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
	if err := (Config{PidFile: pidFile}).Crash(); err != nil {
		t.Errorf("a server gone already: %v", err)
	}
	// Debian's MariaDB 10.11 (10.11.9 and later) recovers as a replica.
	if args := RecoveryArgs("/usr/sbin/mariadbd"); strings.Join(args, " ") != "--init-rpl-role=SLAVE" {
		t.Errorf("MariaDB's recovery options: %q", args)
	}
	if args := RecoveryArgs(filepath.Join(t.TempDir(), "mysqld")); args != nil {
		t.Errorf("a server whose version cannot be read: %q, want no option", args)
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

// TestRecoversAsReplica: the versions with --init-rpl-role.
func TestRecoversAsReplica(t *testing.T) {
	for _, tt := range []struct {
		v    dbop.Version
		want bool
	}{
		{dbop.Version{Engine: dbop.EngineMariaDB, Major: 10, Minor: 11, Patch: 8}, false},
		{dbop.Version{Engine: dbop.EngineMariaDB, Major: 10, Minor: 11, Patch: 9}, true},
		{dbop.Version{Engine: dbop.EngineMariaDB, Major: 11, Minor: 4, Patch: 2}, false},
		{dbop.Version{Engine: dbop.EngineMariaDB, Major: 11, Minor: 4, Patch: 3}, true},
		{dbop.Version{Engine: dbop.EngineMariaDB, Major: 11, Minor: 8, Patch: 1}, true},
		{dbop.Version{Engine: dbop.EngineMySQL, Major: 8, Minor: 4, Patch: 3}, false},
	} {
		if got := recoversAsReplica(tt.v); got != tt.want {
			t.Errorf("%s: %t, want %t", tt.v, got, tt.want)
		}
	}
}
