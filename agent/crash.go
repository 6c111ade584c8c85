package agent

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/example/mysql-operator/dbop"
)

// Crash kills the pod's server with SIGKILL, as a power loss would: no
// clean shutdown (which would commit the transactions waiting for an
// acknowledgement), so that its crash recovery rolls them back (see
// RecoveryArgs). It marks the kill as asked for first, so that the
// server's supervisor (RunServer) starts it again at once, outside the
// kubelet's back-off. The server's pid is in its pid file, on the volume
// the containers share; the pod shares one process namespace, and the
// agent runs as the server's user.
func (c Config) Crash() error {
	data, err := os.ReadFile(c.PidFile)
	if err != nil {
		return fmt.Errorf("read the server's pid file: %w", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || pid <= 1 {
		return fmt.Errorf("pid file %s holds %q, not a server's pid", c.PidFile, strings.TrimSpace(string(data)))
	}
	if err := os.WriteFile(c.crashMarker(), nil, 0o600); err != nil {
		return fmt.Errorf("mark the server's crash as asked for: %w", err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		if errors.Is(err, syscall.ESRCH) {
			return nil // gone already
		}
		_ = os.Remove(c.crashMarker()) // no kill: nothing to restart
		return fmt.Errorf("kill the server (pid %d): %w", pid, err)
	}
	return nil
}

// RecoveryArgs returns the options the server starts with: on MariaDB,
// --init-rpl-role=SLAVE (MDEV-21117, MDEV-33465: 10.11.9, 11.4.3 and
// later), so that the recovery of a crash rolls back the transactions no
// replica acknowledged, and truncates the binary log, rather than commit
// them: an old primary then rejoins without an errant transaction. A
// crashed primary that the operator keeps as the primary may so lose a
// transaction a replica received without acknowledging it; the operator
// then fails over to that replica instead (topology's stepPrimaryBehind).
// A clean shutdown commits such transactions, as before. MySQL, and an
// older MariaDB, recover as before: an old primary that comes back errant
// is reported.
func RecoveryArgs(server string) []string {
	v, err := serverVersion(server)
	if err != nil || !recoversAsReplica(v) {
		return nil
	}
	return []string{"--init-rpl-role=SLAVE"}
}

// recoversAsReplica says whether server version v has --init-rpl-role.
func recoversAsReplica(v dbop.Version) bool {
	if v.Engine != dbop.EngineMariaDB {
		return false
	}
	switch {
	case v.Major == 10 && v.Minor == 11:
		return v.Patch >= 9
	case v.Major == 11 && v.Minor == 4:
		return v.Patch >= 3
	}
	return v.AtLeast(11, 5, 0)
}
