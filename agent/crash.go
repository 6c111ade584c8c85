package agent

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Crash kills the pod's server with SIGKILL, as a power loss would: no
// clean shutdown, so that the kubelet starts it again and its crash
// recovery runs, as a semi-sync replica (see ExecServer): on MariaDB that
// recovery rolls back the transactions an old primary wrote to its binary
// log but no replica acknowledged, and truncates the log (a clean shutdown
// would commit them instead). The server's pid is in its pid file, on the
// volume the containers share; the pod shares one process namespace, and
// the agent runs as the server's user.
func (c Config) Crash() error {
	if err := os.WriteFile(c.recoverMarker(), nil, 0o600); err != nil {
		return fmt.Errorf("mark the server to recover as a replica: %w", err)
	}
	data, err := os.ReadFile(c.PidFile)
	if err != nil {
		return fmt.Errorf("read the server's pid file: %w", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || pid <= 1 {
		return fmt.Errorf("pid file %s holds %q, not a server's pid", c.PidFile, strings.TrimSpace(string(data)))
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		if errors.Is(err, syscall.ESRCH) {
			return nil // gone already
		}
		return fmt.Errorf("kill the server (pid %d): %w", pid, err)
	}
	return nil
}

// recoverMarker is the file that tells ExecServer to start the server
// once as a semi-sync replica: beside the pid file, on the pod's run
// volume, which a container's restart keeps and a new pod does not have.
func (c Config) recoverMarker() string { return filepath.Join(filepath.Dir(c.PidFile), "recover-as-replica") }

// recoveryArgs returns the options the server starts with after Crash, and
// forgets the marker: MariaDB's crash recovery rolls back what no replica
// acknowledged only when the server starts as a semi-sync replica
// (MDEV-21117). A server restarted in place for another reason recovers
// as before, committing what its binary log holds, which its replicas may
// have received: it stays the primary. MySQL has no such recovery.
func (c Config) recoveryArgs(server string) ([]string, error) {
	if _, err := os.Stat(c.recoverMarker()); errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err := os.Remove(c.recoverMarker()); err != nil {
		return nil, err
	}
	if filepath.Base(server) != "mariadbd" {
		return nil, nil
	}
	return []string{"--rpl-semi-sync-slave-enabled=ON"}, nil
}
