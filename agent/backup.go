package agent

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"

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
	cmd := exec.CommandContext(r.Context(), args[0], args[1:]...)
	var stderr strings.Builder
	cmd.Stdout, cmd.Stderr = w, &stderr
	w.Header().Set("Trailer", trailerBackup)
	w.Header().Set("Content-Type", "application/octet-stream")
	result := "ok"
	if err := cmd.Run(); err != nil {
		result = fmt.Sprintf("mariadb-backup: %v: %s", err, tail([]byte(stderr.String())))
	}
	w.Header().Set(trailerBackup, strings.ReplaceAll(result, "\n", " "))
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
