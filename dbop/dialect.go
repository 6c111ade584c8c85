package dbop

import (
	"errors"
	"fmt"
	"time"

	"github.com/example/mysql-operator/topology"
)

// Stmt is one SQL statement with its placeholder arguments.
type Stmt struct {
	// SQL is the statement text with ? placeholders; it never contains a value.
	SQL string
	// Args are the placeholder values, in order.
	Args []any
	// Secret marks statements whose arguments carry a password: server error
	// messages for them are withheld, since some echo the offending value.
	Secret bool
}

// Source is a replication source (or clone donor) and the account to use on it.
type Source struct {
	// Host is the source's address as the replica reaches it.
	Host string
	// Port is the source's MySQL port.
	Port int
	// User and Password are the replication (or donor) account.
	User string
	// Password is User's password.
	Password string
	// SSL asks for TLS to the source. MySQL always uses TLS (SOURCE_SSL=1); on
	// MariaDB it is MASTER_SSL=1, which needs certificates on the source.
	SSL bool
	// SSLCA is the path, on the replica, of the CA the source's certificate
	// must chain to; empty: the certificate is not checked.
	SSLCA string
	// VerifyHost asks, with SSLCA, that the certificate also name Host
	// (MASTER_SSL_VERIFY_SERVER_CERT = 1): Host is a name it holds.
	VerifyHost bool
}

// validate checks a Source without echoing the password.
func (s Source) validate() error {
	switch {
	case s.Host == "":
		return errors.New("source host is empty")
	case s.Port < 1 || s.Port > 65535:
		return fmt.Errorf("source port %d out of range", s.Port)
	case s.User == "":
		return errors.New("source user is empty")
	}
	if err := checkText("source host", s.Host); err != nil {
		return err
	}
	if err := checkText("source user", s.User); err != nil {
		return err
	}
	if err := checkText("source CA", s.SSLCA); err != nil {
		return err
	}
	return checkText("source password", s.Password)
}

// Dialect renders the statements of one server family. The implementations are
// MySQL (8.4 and later) and MariaDB (10.11 and later); DialectFor picks one from a
// parsed version. The interface is sealed.
type Dialect interface {
	// Engine is the server family.
	Engine() Engine
	// Flavor is the GTID flavor of the family.
	Flavor() topology.Flavor
	// StatusQuery is the multi-statement query Instance.Status sends in one round
	// trip.
	StatusQuery() string
	// SetReadOnly stops writes by ordinary users (MySQL: super_read_only).
	SetReadOnly() []Stmt
	// SetWritable allows writes again.
	SetWritable() []Stmt
	// ChangeSource points replication at src (replication must be stopped).
	ChangeSource(src Source) ([]Stmt, error)
	// StartReplica starts both replication threads.
	StartReplica() []Stmt
	// StopReplica stops both replication threads.
	StopReplica() []Stmt
	// StopIOThread stops only the receiver thread (fencing before a failover).
	StopIOThread() []Stmt
	// ResetReplica forgets the replication configuration.
	ResetReplica() []Stmt
	// WaitForGTID waits up to timeout (whole seconds, at least 1) for gtids to be
	// executed; WaitTimedOut tells its single result apart.
	WaitForGTID(gtids string, timeout time.Duration) Stmt
	// WaitTimedOut reports whether WaitForGTID's result means "timed out".
	WaitTimedOut(result int64) bool
	// EnableSemiSyncSource makes commits wait for waitCount replica
	// acknowledgements (MariaDB: always one), never falling back to asynchronous.
	EnableSemiSyncSource(waitCount int) ([]Stmt, error)
	// SemiSyncAcks is how many replica acknowledgements each commit waits
	// for on a source that EnableSemiSyncSource(waitCount) configured: what
	// a failover may count on (topology.Cluster.SemiSyncAcks); 0 for 0.
	SemiSyncAcks(waitCount int) int
	// DisableSemiSyncSource turns the source side of semi-sync off.
	DisableSemiSyncSource() []Stmt
	// EnableSemiSyncReplica makes the replica acknowledge (before START REPLICA).
	EnableSemiSyncReplica() []Stmt
	// DisableSemiSyncReplica turns the replica side of semi-sync off.
	DisableSemiSyncReplica() []Stmt
	// SetGTIDSlavePos sets MariaDB's replication position (seeding).
	SetGTIDSlavePos(pos string) ([]Stmt, error)
	// SetGTIDBinlogState sets MariaDB's binlog GTID state on an empty binlog.
	SetGTIDBinlogState(state string) ([]Stmt, error)
	// CloneFrom replaces the data with a copy of donor's (MySQL clone plugin).
	CloneFrom(donor Source) ([]Stmt, error)
	// ResetBinlogs deletes the binary logs and the GTID history.
	ResetBinlogs() []Stmt
	// Shutdown stops the server; in a pod, its container restarts it.
	Shutdown() []Stmt
	// ReloadTLS makes the server read its certificate, key and CA files
	// again, for new connections; established ones keep theirs.
	ReloadTLS() []Stmt
	// ListConnections returns ID, USER, HOST, COMMAND of every other connection.
	ListConnections() Stmt
	// KillConnection kills one connection.
	KillConnection(id int64) Stmt
	// Bootstrap renders the SQL file a new data directory runs once.
	Bootstrap(cfg BootstrapConfig) (string, error)
	// RestoreAccounts renders the init file that gives a restored data
	// directory this MySQL's operator accounts.
	RestoreAccounts(cfg BootstrapConfig) (string, error)

	names() statusNames
	privileges() map[string]bool
}

// ErrNotSupported is returned for an operation the dialect does not have.
var ErrNotSupported = errors.New("not supported by this server family")

// statusNames are the column and variable names a dialect's status output uses.
type statusNames struct {
	sourceHost, sourcePort, ioRunning, sqlRunning, retrieved, lag, ssl    string
	semiSourceEnabled, semiWaitCount, semiTimeout, semiReplicaEnabled     string
	semiSourceStatus, semiClients, semiYesTx, semiNoTx, semiReplicaStatus string
	semiWaitSessions                                                      string
}

// semiSyncTimeout is how long a semi-sync primary waits for acknowledgements before
// it would fall back to asynchronous replication: 2^32-1 ms (49.7 days), the
// largest value MySQL accepts. Falling back silently would acknowledge commits that
// exist on the primary only, which a failover would then lose; with this timeout a
// primary without acknowledging replicas blocks commits instead (and, with
// wait_no_replica/wait_no_slave ON, keeps waiting with no replica connected) until
// the operator repairs the replicas or fails over.
const semiSyncTimeout = 1<<32 - 1

// A replica's liveness settings, in seconds, set with its source: the
// source sends a heartbeat when it has nothing else to send for
// heartbeatPeriod, so that the replica's net timeout (the operator's
// my.cnf: 10 s) runs out only when its source is really gone; it then
// tries to reconnect every connectRetry. (STOP REPLICA IO_THREAD, the
// fence, waits for a receiver blocked connecting until that attempt ends.)
const (
	connectRetry    = 1
	heartbeatPeriod = 1
)

// waitSeconds converts a wait timeout to whole seconds, at least 1.
func waitSeconds(d time.Duration) int64 {
	s := int64((d + time.Second - 1) / time.Second)
	return max(s, 1)
}

// stmt is a shorthand for a statement without secrets.
func stmt(sql string, args ...any) Stmt { return Stmt{SQL: sql, Args: args} }

// stmts is a shorthand for a list of statements without arguments.
func stmts(sqls ...string) []Stmt {
	out := make([]Stmt, len(sqls))
	for i, s := range sqls {
		out[i] = Stmt{SQL: s}
	}
	return out
}

// verifyServerCert is the 0 or 1 of MASTER_SSL_VERIFY_SERVER_CERT
// (SOURCE_SSL_VERIFY_SERVER_CERT): 1 when the certificate is checked
// against SSLCA and must name Host.
func (s Source) verifyServerCert() int { return sqlBool(s.SSLCA != "" && s.VerifyHost) }

// sqlBool is b as the 0 or 1 of a CHANGE MASTER option.
func sqlBool(b bool) int {
	if b {
		return 1
	}
	return 0
}
