package agent

import (
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"time"

	"github.com/example/mysql-operator/backup"
	"github.com/example/mysql-operator/dbop"
)

// tools are an engine's physical backup programs: mariadb-backup and
// mbstream for MariaDB, Percona's xtrabackup and xbstream for MySQL
// (golden-tested only: no MySQL server runs here). Their arguments are
// rendered here, and nowhere else, with golden files (tools_test.go).
type tools struct {
	// backup is the backup program, which also prepares a copy.
	backup string
	// unpack extracts a stream into a directory.
	unpack string
	// section is the backup program's section of an option file.
	section string
	// stream is the --stream format.
	stream string
	// binlog renders a binary log file as SQL; client runs SQL.
	binlog, client string
	// noTLS are the server's options that start a scratch server (a
	// restore's replay, a verification) without TLS: it listens on its
	// socket only, and its pod need not hold the MySQL's certificate that
	// my.cnf names.
	noTLS []string
}

// toolsFor returns the tools of engine.
func toolsFor(e dbop.Engine) tools {
	if e == dbop.EngineMariaDB {
		return tools{backup: "mariadb-backup", unpack: "mbstream", section: "mariadb-backup", stream: "mbstream",
			binlog: "mariadb-binlog", client: "mariadb", noTLS: []string{"--skip-ssl", "--require-secure-transport=OFF"}}
	}
	return tools{backup: "xtrabackup", unpack: "xbstream", section: "xtrabackup", stream: "xbstream",
		binlog: "mysqlbinlog", client: "mysql", noTLS: []string{"--tls-version=", "--require-secure-transport=OFF"}}
}

// logCopyIntervalMS is how often, in milliseconds, a backup program copies
// the redo log (its default is 1000).
const logCopyIntervalMS = 100

// backupArgs stream a backup to stdout: the account in the option file
// opts, temporary files in work, and, when lsn is set, the backup's
// metadata (xtrabackup_info with its binary log position) copied there.
// The redo log is copied every 100 ms rather than every second: the
// program blocks the server's commits at its end until its copy has caught
// up, and that wait is counted in copy intervals.
func (t tools) backupArgs(opts, work, lsn string) []string {
	args := []string{t.backup, "--defaults-file=" + opts, "--backup", "--stream=" + t.stream, "--target-dir=" + work,
		"--log-copy-interval=" + strconv.Itoa(logCopyIntervalMS)}
	if lsn != "" {
		args = append(args, "--extra-lsndir="+lsn)
	}
	return args
}

// unpackArgs extract a stream read from stdin into dir, with two worker
// threads: with one, mbstream 10.11.19 spent most of a restore copying
// into the page cache (a 1 GiB restore took 10.6 to 11.1 s here, with two
// 7.8 to 8.4 s; docs/backup.md).
func (t tools) unpackArgs(dir string) []string {
	return []string{t.unpack, "-x", "--parallel=2", "-C", dir}
}

// prepareArgs make the copy in dir consistent (crash recovery of the
// copy), with memory for it.
func (t tools) prepareArgs(dir string) []string {
	return []string{t.backup, "--prepare", "--use-memory=256M", "--target-dir=" + dir}
}

// extract unpacks the stream r into dir.
func (t tools) extract(r io.Reader, dir string) error {
	args := t.unpackArgs(dir)
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin = r
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s -x: %w: %s", t.unpack, err, tail(out))
	}
	return nil
}

// prepare makes the copy in dir consistent.
func (t tools) prepare(dir string) error {
	args := t.prepareArgs(dir)
	if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
		return fmt.Errorf("%s --prepare: %w: %s", t.backup, err, tail(out))
	}
	return nil
}

// replayArgs render step's window of the binary log file: from after
// step.After to step.Stop (inclusive) or before step.StopTime, in UTC.
func (t tools) replayArgs(step backup.Step, file string) []string {
	args := []string{t.binlog, "--start-position=" + step.After}
	if step.Stop != "" {
		args = append(args, "--stop-position="+step.Stop)
	}
	if step.StopTime != nil {
		args = append(args, "--stop-datetime="+step.StopTime.UTC().Format(time.DateTime))
	}
	return append(args, file)
}

// clientArgs run the client with the option file opts, for a binary log's
// rendering.
func (t tools) clientArgs(opts string) []string {
	return []string{t.client, "--defaults-file=" + opts, "--binary-mode"}
}
