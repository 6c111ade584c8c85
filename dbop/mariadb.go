package dbop

import (
	"fmt"
	"time"

	"github.com/example/mysql-operator/topology"
)

// MariaDB is the dialect of MariaDB 10.11 and later: CHANGE MASTER with
// MASTER_USE_GTID=slave_pos, read_only (with the READ_ONLY ADMIN privilege revoked
// from everyone but the operator), the built-in semi-sync (rpl_semi_sync_master_* /
// rpl_semi_sync_slave_*), MASTER_GTID_WAIT and RESET MASTER. MariaDB's semi-sync
// has no wait-for-count: a commit waits for one acknowledgement, whatever the number
// of replicas (SemiSyncAcks), so a failover needs every replica reachable to be sure
// one has every acknowledged transaction (topology.FailoverQuorum).
var MariaDB Dialect = mariadbDialect{}

type mariadbDialect struct{}

// Engine implements Dialect.
func (mariadbDialect) Engine() Engine { return EngineMariaDB }

// Flavor implements Dialect.
func (mariadbDialect) Flavor() topology.Flavor { return topology.FlavorMariaDB }

// StatusQuery implements Dialect.
func (mariadbDialect) StatusQuery() string {
	return "SELECT VERSION(), @@server_id, @@read_only, 0, '', '', " +
		"@@gtid_binlog_state, @@gtid_slave_pos, @@gtid_current_pos;\n" +
		"SHOW REPLICA STATUS;\n" +
		"SHOW GLOBAL VARIABLES LIKE 'rpl_semi_sync%';\n" +
		"SHOW GLOBAL STATUS WHERE Variable_name LIKE 'Rpl_semi_sync%' OR Variable_name = 'Ssl_server_not_after'"
}

func (mariadbDialect) names() statusNames {
	return statusNames{
		sourceHost: "Master_Host", sourcePort: "Master_Port",
		ioRunning: "Slave_IO_Running", sqlRunning: "Slave_SQL_Running",
		retrieved: "Gtid_IO_Pos", lag: "Seconds_Behind_Master", ssl: "Master_SSL_Allowed",
		semiSourceEnabled: "rpl_semi_sync_master_enabled", semiTimeout: "rpl_semi_sync_master_timeout",
		semiReplicaEnabled: "rpl_semi_sync_slave_enabled", semiSourceStatus: "Rpl_semi_sync_master_status",
		semiClients: "Rpl_semi_sync_master_clients", semiYesTx: "Rpl_semi_sync_master_yes_tx",
		semiNoTx: "Rpl_semi_sync_master_no_tx", semiReplicaStatus: "Rpl_semi_sync_slave_status",
		semiWaitSessions: "Rpl_semi_sync_master_wait_sessions",
	}
}

// SetReadOnly implements Dialect.
func (mariadbDialect) SetReadOnly() []Stmt { return stmts("SET GLOBAL read_only = ON") }

// SetWritable implements Dialect.
func (mariadbDialect) SetWritable() []Stmt { return stmts("SET GLOBAL read_only = OFF") }

// ChangeSource first aligns gtid_slave_pos with gtid_current_pos: an instance that
// was a primary has its own newest transactions only in its binary log, and with a
// stale gtid_slave_pos, MASTER_USE_GTID=slave_pos would ask the new source for the
// stream from an old position (which fails once those binary logs are purged).
func (mariadbDialect) ChangeSource(src Source) ([]Stmt, error) {
	if err := src.validate(); err != nil {
		return nil, err
	}
	return []Stmt{
		stmt("SET GLOBAL gtid_slave_pos = @@GLOBAL.gtid_current_pos"),
		{SQL: "CHANGE MASTER TO MASTER_HOST = ?, MASTER_PORT = ?, MASTER_USER = ?, MASTER_PASSWORD = ?, " +
			"MASTER_USE_GTID = slave_pos, MASTER_SSL = ?, MASTER_SSL_CA = ?, MASTER_SSL_VERIFY_SERVER_CERT = ?, " +
			"MASTER_CONNECT_RETRY = ?, MASTER_HEARTBEAT_PERIOD = ?",
			Args: []any{src.Host, src.Port, src.User, src.Password, sqlBool(src.SSL), src.SSLCA, src.verifyServerCert(), connectRetry, heartbeatPeriod}, Secret: true},
	}, nil
}

// StartReplica implements Dialect.
func (mariadbDialect) StartReplica() []Stmt { return stmts("START REPLICA") }

// StopReplica implements Dialect.
func (mariadbDialect) StopReplica() []Stmt { return stmts("STOP REPLICA") }

// StopIOThread implements Dialect.
func (mariadbDialect) StopIOThread() []Stmt { return stmts("STOP REPLICA IO_THREAD") }

// ResetReplica implements Dialect.
func (mariadbDialect) ResetReplica() []Stmt { return stmts("RESET REPLICA ALL") }

// WaitForGTID waits with MASTER_GTID_WAIT, which compares the replication
// position (gtid_slave_pos) per domain; gtids is a position such as
// topology.GTIDSet.WaitTarget returns.
func (mariadbDialect) WaitForGTID(gtids string, timeout time.Duration) Stmt {
	return stmt("SELECT MASTER_GTID_WAIT(?, ?)", gtids, waitSeconds(timeout))
}

// WaitTimedOut implements Dialect.
func (mariadbDialect) WaitTimedOut(result int64) bool { return result == -1 }

// EnableSemiSyncSource ignores waitCount beyond checking it: MariaDB waits for one
// acknowledgement. AFTER_SYNC makes the wait lossless (the transaction is not
// visible to other clients before a replica has it).
func (mariadbDialect) EnableSemiSyncSource(waitCount int) ([]Stmt, error) {
	if waitCount < 1 {
		return nil, fmt.Errorf("semi-sync wait count %d: want at least 1", waitCount)
	}
	return []Stmt{stmt("SET GLOBAL rpl_semi_sync_master_timeout = ?, GLOBAL rpl_semi_sync_master_wait_no_slave = ON, "+
		"GLOBAL rpl_semi_sync_master_wait_point = 'AFTER_SYNC', GLOBAL rpl_semi_sync_master_enabled = ON", semiSyncTimeout)}, nil
}

// SemiSyncAcks is 1 for any waitCount: MariaDB's semi-sync has no setting
// of the count and waits for one acknowledgement whatever the number of
// replicas (TestReplicationMariaDB shows it on the server).
func (mariadbDialect) SemiSyncAcks(waitCount int) int { return min(max(waitCount, 0), 1) }

// DisableSemiSyncSource implements Dialect.
func (mariadbDialect) DisableSemiSyncSource() []Stmt {
	return stmts("SET GLOBAL rpl_semi_sync_master_enabled = OFF")
}

// EnableSemiSyncReplica implements Dialect.
func (mariadbDialect) EnableSemiSyncReplica() []Stmt {
	return stmts("SET GLOBAL rpl_semi_sync_slave_enabled = ON")
}

// DisableSemiSyncReplica implements Dialect.
func (mariadbDialect) DisableSemiSyncReplica() []Stmt {
	return stmts("SET GLOBAL rpl_semi_sync_slave_enabled = OFF")
}

// SetGTIDSlavePos sets the position replication resumes from, after restoring a
// backup taken at that position (replication must be stopped).
func (mariadbDialect) SetGTIDSlavePos(pos string) ([]Stmt, error) {
	p, err := topology.ParseMariaDBGTIDSet(pos)
	if err != nil {
		return nil, err
	}
	if p.String() != p.Position().String() {
		return nil, fmt.Errorf("gtid_slave_pos %q has more than one GTID per domain", pos)
	}
	return []Stmt{stmt("SET GLOBAL gtid_slave_pos = ?", p.String())}, nil
}

// SetGTIDBinlogState records the per-(domain, server) history of a restored backup
// in the binary log state; the server refuses it unless the binary log is empty.
func (mariadbDialect) SetGTIDBinlogState(state string) ([]Stmt, error) {
	s, err := topology.ParseMariaDBGTIDSet(state)
	if err != nil {
		return nil, err
	}
	return []Stmt{stmt("SET GLOBAL gtid_binlog_state = ?", s.String())}, nil
}

// CloneFrom is not available: MariaDB has no clone plugin; seed with mariadb-backup.
func (mariadbDialect) CloneFrom(Source) ([]Stmt, error) {
	return nil, fmt.Errorf("clone: %w (seed with mariadb-backup)", ErrNotSupported)
}

// ResetBinlogs implements Dialect.
func (mariadbDialect) ResetBinlogs() []Stmt { return stmts("RESET MASTER") }

// Shutdown implements Dialect.
func (mariadbDialect) Shutdown() []Stmt { return stmts("SHUTDOWN") }

// ReloadTLS implements Dialect: FLUSH SSL re-reads the files at the
// paths the server was started with. LOCAL keeps it out of the binary
// log: a FLUSH logged on a replica is a transaction its primary never had.
func (mariadbDialect) ReloadTLS() []Stmt { return stmts("FLUSH LOCAL SSL") }

// ListConnections implements Dialect.
func (mariadbDialect) ListConnections() Stmt {
	return stmt("SELECT ID, IFNULL(USER, ''), IFNULL(HOST, ''), IFNULL(COMMAND, '') " +
		"FROM information_schema.PROCESSLIST WHERE ID <> CONNECTION_ID()")
}

// KillConnection implements Dialect.
func (mariadbDialect) KillConnection(id int64) Stmt { return stmt("KILL CONNECTION ?", id) }

// privileges are the privilege names GRANT and REVOKE accept for GitOps users:
// database and table privileges, no administrative ones.
func (mariadbDialect) privileges() map[string]bool { return mariadbPrivileges }

var mariadbPrivileges = privilegeSet(commonPrivileges, "DELETE HISTORY")
