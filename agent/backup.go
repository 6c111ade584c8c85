package agent

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"

	"github.com/klauspost/readahead"

	"github.com/example/mysql-operator/dbop"
)

// trailerBackup is the HTTP trailer that says whether a backup stream is
// whole: "ok", or why not.
const trailerBackup = "X-Backup-Result"

// backup streams a mariadb-backup of the instance (mbstream format) as
// the response, with the account and server options in a private option
// file, never on the command line.
func (s *seeder) backup(w http.ResponseWriter, r *http.Request) {
	t := toolsFor(dbop.EngineMariaDB)
	opts, err := s.c.optionFile(t.section)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	defer os.Remove(opts)
	work, err := os.MkdirTemp("", "backup-")
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	defer os.RemoveAll(work)
	args := t.backupArgs(opts, work, "")
	started := false
	err = runBackupProgram(r.Context(), args, func(stream io.Reader) error {
		started = true
		w.Header().Set("Trailer", trailerBackup)
		w.Header().Set("Content-Type", "application/octet-stream")
		if _, err := io.Copy(w, stream); err != nil {
			return fmt.Errorf("sending the stream: %w", err)
		}
		return nil
	})
	if !started {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	result := "ok"
	if err != nil {
		result = err.Error()
	}
	w.Header().Set(trailerBackup, strings.ReplaceAll(result, "\n", " "))
}

// The read-ahead of a backup program's stream: 16 buffers of 1 MiB, more
// than the program writes while it blocks the server's commits (the log
// tables, the redo log written meanwhile, the Aria log's tail) on a server
// that is not rewriting gigabytes a second.
const (
	readAheadBuffers = 16
	readAheadSize    = 1 << 20
)

// runBackupProgram runs the backup program of args and hands its stdout to
// consume, read ahead so that the program never waits for a slow reader (a
// part being uploaded, a seeded replica unpacking) while it holds BACKUP
// STAGE BLOCK_COMMIT at its end. An error of consume stops the program and
// is returned as it is; a program that fails is reported with the end of
// what it wrote to stderr.
func runBackupProgram(ctx context.Context, args []string, consume func(io.Reader) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	ahead, err := readahead.NewReaderSize(stdout, readAheadBuffers, readAheadSize)
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		ahead.Close() // a failed start closes stdout: its reader has ended
		return fmt.Errorf("start %s: %w", args[0], err)
	}
	consumeErr := consume(ahead)
	if consumeErr != nil {
		cancel() // stop the backup program: nobody takes its stream
	}
	waitErr := cmd.Wait()
	ahead.Close() // its reader has ended with the program's stdout
	switch {
	case consumeErr != nil:
		return consumeErr
	case waitErr != nil:
		return fmt.Errorf("%s: %w: %s", args[0], waitErr, tail([]byte(stderr.String())))
	}
	return nil
}

// optionFile writes a private option file for a backup program whose
// section it is: the server's own options (the operator's my.cnf), then
// the agent's account.
func (c Config) optionFile(section string) (string, error) {
	pw, err := c.readSecret(AgentPasswordFile)
	if err != nil {
		return "", err
	}
	f, err := os.CreateTemp("", "backup-*.cnf")
	if err != nil {
		return "", err
	}
	defer f.Close()
	_, err = fmt.Fprintf(f, "!include %s\n[%s]\nuser=%s\npassword=%s\nsocket=%s\n",
		c.ServerConfig, section, dbop.AgentUser, pw, c.Socket)
	return f.Name(), err
}
