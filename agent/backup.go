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
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	ahead, err := startReadAhead(cmd)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Trailer", trailerBackup)
	w.Header().Set("Content-Type", "application/octet-stream")
	_, copyErr := io.Copy(w, ahead)
	if copyErr != nil {
		cancel() // stop the backup program: nobody takes its stream
	}
	waitErr := cmd.Wait()
	ahead.Close() // its reader has ended with the program's stdout
	result := "ok"
	switch {
	case copyErr != nil:
		result = fmt.Sprintf("sending the stream: %v", copyErr)
	case waitErr != nil:
		result = fmt.Sprintf("mariadb-backup: %v: %s", waitErr, tail([]byte(stderr.String())))
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

// startReadAhead starts cmd with its stdout read ahead, so that a backup
// program never waits for a slow reader (a part being uploaded, a seeded
// replica unpacking) while it holds BACKUP STAGE BLOCK_COMMIT at its end.
// Close the reader after cmd.Wait.
func startReadAhead(cmd *exec.Cmd) (io.ReadCloser, error) {
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	ahead, err := readahead.NewReaderSize(stdout, readAheadBuffers, readAheadSize)
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		ahead.Close() // a failed start closes stdout: its reader has ended
		return nil, err
	}
	return ahead, nil
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
