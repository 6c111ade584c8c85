package dbtest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Backup copies the data of the running server src the way the agent seeds an
// instance: mariadb-backup --backup --stream=mbstream over src's unix socket as
// user, piped into mbstream -x, then mariadb-backup --prepare. It returns the
// prepared directory (for StartFromDataDir), which holds the backup's
// xtrabackup_binlog_info. The password is passed in a 0600 option file, not on the
// command line.
func Backup(t testing.TB, src *Server, user, password string) string {
	t.Helper()
	backup, mbstream := Binary(t, "mariadb-backup"), Binary(t, "mbstream")
	if !src.Running() {
		t.Fatalf("dbtest: backup of server %d: %v", src.ServerID, errNotRunning)
	}
	dir, err := os.MkdirTemp(shortTempDir(), "dbtest-backup-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) }) // StartFromDataDir moves data out first
	opts := filepath.Join(dir, "client.cnf")
	cnf := fmt.Sprintf("[mariadb-backup]\nuser=%s\npassword=%s\nsocket=%s\n", user, password, src.Socket)
	if err := os.WriteFile(opts, []byte(cnf), 0o600); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	if err := os.Mkdir(data, 0o700); err != nil {
		t.Fatal(err)
	}
	produce := exec.Command(backup, "--defaults-extra-file="+opts, "--backup", "--stream=mbstream",
		"--target-dir="+filepath.Join(dir, "tmp"))
	consume := exec.Command(mbstream, "-x", "-C", data)
	var perr, cerr bytes.Buffer
	produce.Stderr, consume.Stderr = &perr, &cerr
	pipe, err := produce.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	consume.Stdin = pipe
	if err := consume.Start(); err != nil {
		t.Fatalf("dbtest: start mbstream: %v", err)
	}
	if err := produce.Run(); err != nil {
		_ = consume.Wait()
		t.Fatalf("dbtest: mariadb-backup --backup: %v\n%s", err, tail(perr.Bytes(), 20))
	}
	if err := consume.Wait(); err != nil {
		t.Fatalf("dbtest: mbstream -x: %v\n%s", err, tail(cerr.Bytes(), 20))
	}
	out, err := exec.Command(backup, "--prepare", "--target-dir="+data).CombinedOutput()
	if err != nil {
		t.Fatalf("dbtest: mariadb-backup --prepare: %v\n%s", err, tail(out, 20))
	}
	return data
}
