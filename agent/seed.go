package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sync"

	"github.com/example/mysql-operator/dbop"
	"github.com/example/mysql-operator/topology"
)

// Seeding a MariaDB instance: the operator asks the agent of an empty
// instance (POST /seed) to copy a donor's data; the agent fetches the
// donor agent's mariadb-backup stream (GET /backup), unpacks it with
// mbstream beside the data directory and prepares it. The operator then
// shuts the server down; its supervisor (`agent run-server`) swaps the
// prepared copy in and starts it again; the operator sets the
// GTID position the agent recorded and clears the seed (DELETE /seed).
// The state lives in files of the data volume, so it survives restarts.

// SeedPhase is where a seed stands.
type SeedPhase string

// Phases of a seed.
const (
	// SeedNone: no seed.
	SeedNone SeedPhase = ""
	// SeedRunning: the copy is being fetched and prepared.
	SeedRunning SeedPhase = "Running"
	// SeedPrepared: the copy is ready beside the data directory; the
	// server must restart for run-server to swap it in.
	SeedPrepared SeedPhase = "Prepared"
	// SeedRestored: the server runs on the copy; its GTID position must
	// be set before it replicates.
	SeedRestored SeedPhase = "Restored"
	// SeedFailed: the copy failed; Error says why.
	SeedFailed SeedPhase = "Failed"
)

// SeedRequest asks an agent to seed its instance from a donor.
type SeedRequest struct {
	// Donor is the donor agent's address, host:port.
	Donor string `json:"donor"`
	// DonorName is the name the donor agent's certificate holds: when set,
	// the copy is fetched over mutual TLS, else in clear.
	DonorName string `json:"donorName,omitempty"`
	// DonorBinlogState is the donor's @@gtid_binlog_state read just before
	// the request (see dbop.SeedState).
	DonorBinlogState string `json:"donorBinlogState"`
}

// SeedStatus is the state of a seed.
type SeedStatus struct {
	Phase SeedPhase `json:"phase"`
	// Error says why a seed failed.
	Error string `json:"error,omitempty"`
	// BinlogState and SlavePos are what the restored instance records
	// before it replicates (dbop.SeedState).
	BinlogState string `json:"binlogState,omitempty"`
	SlavePos    string `json:"slavePos,omitempty"`
	// Request is what was asked.
	Request SeedRequest `json:"request"`
}

// seeder runs the seed of the agent's instance, one at a time.
type seeder struct {
	c       Config
	token   string
	client  *http.Client
	mu      sync.Mutex
	running bool
}

// paths of the seed, in the data volume (the parent of DataDir).
func (s *seeder) file() string     { return filepath.Join(filepath.Dir(s.c.DataDir), "seed.json") }
func (s *seeder) tmpDir() string   { return filepath.Join(filepath.Dir(s.c.DataDir), "seed.tmp") }
func (s *seeder) readyDir() string { return filepath.Join(filepath.Dir(s.c.DataDir), "seed.ready") }

// status reads the seed's state; a seed Running in no process of this
// agent was interrupted.
func (s *seeder) status() (SeedStatus, error) {
	var st SeedStatus
	data, err := os.ReadFile(s.file())
	if errors.Is(err, os.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, err
	}
	if err := json.Unmarshal(data, &st); err != nil {
		return st, fmt.Errorf("read %s: %w", s.file(), err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if st.Phase == SeedRunning && !s.running {
		st.Phase, st.Error = SeedFailed, "interrupted: the agent restarted"
	}
	return st, nil
}

// save writes the seed's state.
func (s *seeder) save(st SeedStatus) error {
	data, _ := json.Marshal(st) // strings always marshal
	tmp := s.file() + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, s.file())
}

// start starts a seed unless one exists; the copy runs in the background.
func (s *seeder) start(req SeedRequest) error {
	st, err := s.status()
	if err != nil {
		return err
	}
	if st.Phase != SeedNone {
		return fmt.Errorf("a seed is %s: clear it first", st.Phase)
	}
	s.mu.Lock()
	s.running = true
	s.mu.Unlock()
	if err := s.save(SeedStatus{Phase: SeedRunning, Request: req}); err != nil {
		return err
	}
	go s.run(req)
	return nil
}

// run copies and prepares the donor's data, and records the outcome.
func (s *seeder) run(req SeedRequest) {
	st, err := s.copyAndPrepare(req)
	if err != nil {
		st = SeedStatus{Phase: SeedFailed, Error: err.Error(), Request: req}
		_ = os.RemoveAll(s.tmpDir())
	}
	s.mu.Lock()
	s.running = false
	s.mu.Unlock()
	_ = s.save(st)
}

// copyAndPrepare fetches the donor's backup into seed.tmp, prepares it,
// reads its GTID position and renames it seed.ready.
func (s *seeder) copyAndPrepare(req SeedRequest) (SeedStatus, error) {
	for _, d := range []string{s.tmpDir(), s.readyDir()} {
		if err := os.RemoveAll(d); err != nil {
			return SeedStatus{}, err
		}
	}
	if err := os.MkdirAll(s.tmpDir(), 0o750); err != nil {
		return SeedStatus{}, err
	}
	if err := s.fetch(req); err != nil {
		return SeedStatus{}, err
	}
	if err := toolsFor(dbop.EngineMariaDB).prepare(s.tmpDir()); err != nil {
		return SeedStatus{}, err
	}
	raw, err := os.ReadFile(filepath.Join(s.tmpDir(), "xtrabackup_binlog_info"))
	if err != nil {
		return SeedStatus{}, fmt.Errorf("the backup has no binlog info: %w", err)
	}
	info, err := dbop.ParseBinlogInfo(string(raw), topology.FlavorMariaDB)
	if err != nil {
		return SeedStatus{}, err
	}
	state, pos, err := dbop.SeedState(info, req.DonorBinlogState)
	if err != nil {
		return SeedStatus{}, err
	}
	if err := os.Rename(s.tmpDir(), s.readyDir()); err != nil {
		return SeedStatus{}, err
	}
	return SeedStatus{Phase: SeedPrepared, BinlogState: state, SlavePos: pos, Request: req}, nil
}

// fetch streams the donor's backup into mbstream.
func (s *seeder) fetch(req SeedRequest) error {
	donor, client, scheme := req.Donor, s.client, "http://"
	if req.DonorName != "" {
		if s.c.TLSDir == "" {
			return fmt.Errorf("the donor %s serves its copy over TLS, and this pod has no certificate: it is made again with one", donor)
		}
		cfg, err := s.c.clientTLS(req.DonorName)
		if err != nil {
			return err
		}
		client, scheme = &http.Client{Transport: &http.Transport{TLSClientConfig: cfg, ForceAttemptHTTP2: false}}, "https://"
	}
	ctx := context.Background()
	httpReq, err := http.NewRequestWithContext(ctx, http.MethodGet, scheme+donor+"/backup", nil)
	if err != nil {
		return err
	}
	httpReq.Header.Set("Authorization", "Bearer "+s.token)
	resp, err := client.Do(httpReq)
	if err != nil {
		return fmt.Errorf("fetch the backup of %s: %w", donor, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
		return fmt.Errorf("fetch the backup of %s: %s: %s", donor, resp.Status, msg)
	}
	if err := toolsFor(dbop.EngineMariaDB).extract(resp.Body, s.tmpDir()); err != nil {
		return err
	}
	// A stream cut short by the donor ends the body early without an HTTP
	// error: the donor writes a last line only after mariadb-backup
	// succeeded (see backup), and the trailer says so.
	if resp.Trailer.Get(trailerBackup) != "ok" {
		return fmt.Errorf("the backup of %s did not complete: %s", donor, resp.Trailer.Get(trailerBackup))
	}
	return nil
}

// clear forgets a seed that is Restored or Failed, and removes what a
// failed one left.
func (s *seeder) clear() error {
	st, err := s.status()
	if err != nil {
		return err
	}
	if st.Phase == SeedRunning || st.Phase == SeedPrepared {
		return fmt.Errorf("a seed is %s", st.Phase)
	}
	for _, d := range []string{s.tmpDir(), s.readyDir()} {
		if err := os.RemoveAll(d); err != nil {
			return err
		}
	}
	err = os.Remove(s.file())
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}

// tail returns the end of a program's output, for an error.
func tail(out []byte) string {
	if len(out) > 512 {
		out = out[len(out)-512:]
	}
	return string(out)
}

// swapIn moves a prepared seed into the data directory's place and marks
// the seed Restored.
func (s *seeder) swapIn() error {
	if _, err := os.Stat(s.readyDir()); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	st, err := s.status()
	if err != nil {
		return err
	}
	if st.Phase != SeedPrepared {
		return fmt.Errorf("%s exists but the seed is %q", s.readyDir(), st.Phase)
	}
	old := s.c.DataDir + ".replaced"
	if err := os.RemoveAll(old); err != nil {
		return err
	}
	if err := os.Rename(s.c.DataDir, old); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if err := os.Rename(s.readyDir(), s.c.DataDir); err != nil {
		return err
	}
	st.Phase = SeedRestored
	if err := s.save(st); err != nil {
		return err
	}
	return os.RemoveAll(old)
}
