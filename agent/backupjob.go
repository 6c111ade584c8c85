package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/example/mysql-operator/backup"
)

// BackupPhase is where a backup of the agent's instance stands.
type BackupPhase string

// Phases of a backup.
const (
	// BackupRunning: the stream is being uploaded.
	BackupRunning BackupPhase = "Running"
	// BackupComplete: the manifest is written.
	BackupComplete BackupPhase = "Complete"
	// BackupFailed: Error says why; no manifest was written.
	BackupFailed BackupPhase = "Failed"
)

// BackupRequest asks the agent to back its instance up to the MySQL's storage.
type BackupRequest struct {
	// Name is the backup's name, its directory in the bucket.
	Name string `json:"name"`
}

// BackupStatus is the state of a backup the agent took or is taking.
type BackupStatus struct {
	Name  string      `json:"name"`
	Phase BackupPhase `json:"phase"`
	// Error says why it failed.
	Error string `json:"error,omitempty"`
	// RawBytes is how much of the stream was read, before compression.
	RawBytes int64 `json:"rawBytes"`
	// Manifest is the complete backup's.
	Manifest *backup.Manifest `json:"manifest,omitempty"`
}

// backupJobs runs the agent's backups, one at a time, and remembers the
// last: an agent restarted knows none, and the operator asks again
// (takeBackup of a complete backup returns its manifest).
type backupJobs struct {
	c        Config
	ctx      context.Context
	mu       sync.Mutex
	last     *BackupStatus
	progress atomic.Int64
}

// start starts the backup req unless another runs; the same one running
// is not an error.
func (j *backupJobs) start(req BackupRequest) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.last != nil && j.last.Phase == BackupRunning {
		if j.last.Name == req.Name {
			return nil
		}
		return fmt.Errorf("backup %s is running", j.last.Name)
	}
	j.progress.Store(0)
	j.last = &BackupStatus{Name: req.Name, Phase: BackupRunning}
	go j.run(req.Name)
	return nil
}

// run takes the backup and records the outcome.
func (j *backupJobs) run(name string) {
	m, err := j.c.takeBackup(j.ctx, name, &j.progress)
	st := BackupStatus{Name: name, Phase: BackupComplete, RawBytes: j.progress.Load()}
	if err != nil {
		st.Phase, st.Error = BackupFailed, err.Error()
	} else {
		st.Manifest = &m
	}
	j.mu.Lock()
	j.last = &st
	j.mu.Unlock()
}

// status returns the state of backup name, false when the agent knows none.
func (j *backupJobs) status(name string) (BackupStatus, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.last == nil || j.last.Name != name {
		return BackupStatus{}, false
	}
	st := *j.last
	if st.Phase == BackupRunning {
		st.RawBytes = j.progress.Load()
	}
	return st, true
}

// handle adds the backup endpoints to mux, behind auth.
func (j *backupJobs) handle(mux *http.ServeMux, auth func(http.Handler) http.Handler) {
	mux.Handle("POST /backups", auth(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req BackupRequest
		if err := json.NewDecoder(io.LimitReader(r.Body, 1<<16)).Decode(&req); err != nil || req.Name == "" {
			http.Error(w, "want a JSON backup request with a name", http.StatusBadRequest)
			return
		}
		answerWith(w, j.start(req), http.StatusConflict)
	})))
	mux.Handle("GET /backups/{name}", auth(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		st, ok := j.status(r.PathValue("name"))
		if !ok {
			http.Error(w, "no such backup on this agent", http.StatusNotFound)
			return
		}
		_, _ = w.Write(marshal(st))
	})))
}
