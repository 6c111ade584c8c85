package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

// ExecServer replaces the agent with the server, argv[0] found on PATH,
// after swapping in a prepared seed (the old data directory of an
// instance being seeded holds nothing worth keeping: the operator seeds
// empty instances only), and with the options of its crash recovery
// (RecoveryArgs).
func ExecServer(c Config, argv []string) error {
	if len(argv) == 0 {
		return errors.New("no server command")
	}
	s := &seeder{c: c}
	if err := s.swapIn(); err != nil {
		return err
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return err
	}
	return syscall.Exec(path, append(argv, RecoveryArgs(path)...), os.Environ())
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

// marshal is json.Marshal for the handlers' answers.
func marshal(v any) []byte {
	data, _ := json.Marshal(v) // the answers are plain structs
	return data
}
