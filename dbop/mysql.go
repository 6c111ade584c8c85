package dbop

import (
	"fmt"
	"time"

	"github.com/example/mysql-operator/topology"
)

// MySQL is the dialect of MySQL 8.4 and later (8.4 removed CHANGE MASTER, START
// SLAVE and RESET MASTER): CHANGE REPLICATION SOURCE with auto-positioning and TLS,
// super_read_only, the rpl_semi_sync_source / rpl_semi_sync_replica plugins (loaded
// by my.cnf), WAIT_FOR_EXECUTED_GTID_SET, CLONE INSTANCE and RESET BINARY LOGS AND
// GTIDS. No MySQL server is available to the tests: these statements are checked
// against golden files only (testdata/mysql.sql).
var MySQL Dialect = mysqlDialect{}

type mysqlDialect struct{}

// Engine implements Dialect.
func (mysqlDialect) Engine() Engine { return EngineMySQL }

// Flavor implements Dialect.
func (mysqlDialect) Flavor() topology.Flavor { return topology.FlavorMySQL }

// StatusQuery implements Dialect.
func (mysqlDialect) StatusQuery() string {
	return "SELECT VERSION(), @@server_id, @@read_only, @@super_read_only, @@server_uuid, " +
		"@@gtid_executed, '', '', '';\n" +
		"SHOW REPLICA STATUS;\n" +
		"SHOW GLOBAL VARIABLES LIKE 'rpl_semi_sync%';\n" +
		"SHOW GLOBAL STATUS WHERE Variable_name LIKE 'Rpl_semi_sync%' OR Variable_name = 'Ssl_server_not_after'"
}

func (mysqlDialect) names() statusNames {
	return statusNames{
		sourceHost: "Source_Host", sourcePort: "Source_Port",
		ioRunning: "Replica_IO_Running", sqlRunning: "Replica_SQL_Running",
		retrieved: "Retrieved_Gtid_Set", lag: "Seconds_Behind_Source", ssl: "Source_SSL_Allowed",
		semiSourceEnabled: "rpl_semi_sync_source_enabled", semiWaitCount: "rpl_semi_sync_source_wait_for_replica_count",
		semiTimeout: "rpl_semi_sync_source_timeout", semiReplicaEnabled: "rpl_semi_sync_replica_enabled",
		semiSourceStatus: "Rpl_semi_sync_source_status", semiClients: "Rpl_semi_sync_source_clients",
		semiYesTx: "Rpl_semi_sync_source_yes_tx", semiNoTx: "Rpl_semi_sync_source_no_tx",
		semiReplicaStatus: "Rpl_semi_sync_replica_status", semiWaitSessions: "Rpl_semi_sync_source_wait_sessions",
	}
}

// SetReadOnly implements Dialect.
func (mysqlDialect) SetReadOnly() []Stmt { return stmts("SET GLOBAL super_read_only = ON") }

// SetWritable implements Dialect.
func (mysqlDialect) SetWritable() []Stmt {
	return stmts("SET GLOBAL super_read_only = OFF, GLOBAL read_only = OFF")
}

// ChangeSource implements Dialect.
func (mysqlDialect) ChangeSource(src Source) ([]Stmt, error) {
	if err := src.validate(); err != nil {
		return nil, err
	}
	return []Stmt{{SQL: "CHANGE REPLICATION SOURCE TO SOURCE_HOST = ?, SOURCE_PORT = ?, SOURCE_USER = ?, " +
		"SOURCE_PASSWORD = ?, SOURCE_AUTO_POSITION = 1, SOURCE_SSL = 1, SOURCE_SSL_CA = ?, SOURCE_SSL_VERIFY_SERVER_CERT = ?, " +
		"GET_SOURCE_PUBLIC_KEY = 1, SOURCE_CONNECT_RETRY = ?, SOURCE_HEARTBEAT_PERIOD = ?",
		Args: []any{src.Host, src.Port, src.User, src.Password, src.SSLCA, src.verifyServerCert(), connectRetry, heartbeatPeriod}, Secret: true}}, nil
}

// StartReplica implements Dialect.
func (mysqlDialect) StartReplica() []Stmt { return stmts("START REPLICA") }

// StopReplica implements Dialect.
func (mysqlDialect) StopReplica() []Stmt { return stmts("STOP REPLICA") }

// StopIOThread implements Dialect.
func (mysqlDialect) StopIOThread() []Stmt { return stmts("STOP REPLICA IO_THREAD") }

// ResetReplica implements Dialect.
func (mysqlDialect) ResetReplica() []Stmt { return stmts("RESET REPLICA ALL") }

// WaitForGTID implements Dialect.
func (mysqlDialect) WaitForGTID(gtids string, timeout time.Duration) Stmt {
	return stmt("SELECT WAIT_FOR_EXECUTED_GTID_SET(?, ?)", gtids, waitSeconds(timeout))
}

// WaitTimedOut implements Dialect.
func (mysqlDialect) WaitTimedOut(result int64) bool { return result == 1 }

// EnableSemiSyncSource implements Dialect.
func (mysqlDialect) EnableSemiSyncSource(waitCount int) ([]Stmt, error) {
	if waitCount < 1 {
		return nil, fmt.Errorf("semi-sync wait count %d: want at least 1", waitCount)
	}
	return []Stmt{stmt("SET GLOBAL rpl_semi_sync_source_timeout = ?, GLOBAL rpl_semi_sync_source_wait_no_replica = ON, "+
		"GLOBAL rpl_semi_sync_source_wait_point = 'AFTER_SYNC', GLOBAL rpl_semi_sync_source_wait_for_replica_count = ?, "+
		"GLOBAL rpl_semi_sync_source_enabled = ON", semiSyncTimeout, waitCount)}, nil
}

// SemiSyncAcks is waitCount: EnableSemiSyncSource sets
// rpl_semi_sync_source_wait_for_replica_count to it.
func (mysqlDialect) SemiSyncAcks(waitCount int) int { return max(waitCount, 0) }

// DisableSemiSyncSource implements Dialect.
func (mysqlDialect) DisableSemiSyncSource() []Stmt {
	return stmts("SET GLOBAL rpl_semi_sync_source_enabled = OFF")
}

// EnableSemiSyncReplica implements Dialect.
func (mysqlDialect) EnableSemiSyncReplica() []Stmt {
	return stmts("SET GLOBAL rpl_semi_sync_replica_enabled = ON")
}

// DisableSemiSyncReplica implements Dialect.
func (mysqlDialect) DisableSemiSyncReplica() []Stmt {
	return stmts("SET GLOBAL rpl_semi_sync_replica_enabled = OFF")
}

// SetGTIDSlavePos is MariaDB only: MySQL GTID state comes with the cloned data.
func (mysqlDialect) SetGTIDSlavePos(string) ([]Stmt, error) {
	return nil, fmt.Errorf("gtid_slave_pos: %w", ErrNotSupported)
}

// SetGTIDBinlogState is MariaDB only.
func (mysqlDialect) SetGTIDBinlogState(string) ([]Stmt, error) {
	return nil, fmt.Errorf("gtid_binlog_state: %w", ErrNotSupported)
}

// CloneFrom restricts the donor list to the donor, then clones over TLS. The server
// restarts itself afterwards (the clone plugin needs a supervisor).
func (mysqlDialect) CloneFrom(donor Source) ([]Stmt, error) {
	if err := donor.validate(); err != nil {
		return nil, err
	}
	addr := fmt.Sprintf("%s:%d", donor.Host, donor.Port)
	return []Stmt{
		stmt("SET GLOBAL clone_valid_donor_list = ?", addr),
		{SQL: "CLONE INSTANCE FROM ?@?:? IDENTIFIED BY ? REQUIRE SSL",
			Args: []any{donor.User, donor.Host, donor.Port, donor.Password}, Secret: true},
	}, nil
}

// ResetBinlogs implements Dialect.
func (mysqlDialect) ResetBinlogs() []Stmt { return stmts("RESET BINARY LOGS AND GTIDS") }

// Shutdown implements Dialect.
func (mysqlDialect) Shutdown() []Stmt { return stmts("SHUTDOWN") }

// ReloadTLS implements Dialect: the TLS context of new connections is
// built again from the ssl_* settings' files.
func (mysqlDialect) ReloadTLS() []Stmt { return stmts("ALTER INSTANCE RELOAD TLS") }

// ListConnections implements Dialect.
func (mysqlDialect) ListConnections() Stmt {
	return stmt("SELECT ID, IFNULL(USER, ''), IFNULL(HOST, ''), IFNULL(COMMAND, '') " +
		"FROM performance_schema.processlist WHERE ID <> CONNECTION_ID()")
}

// KillConnection implements Dialect.
func (mysqlDialect) KillConnection(id int64) Stmt { return stmt("KILL CONNECTION ?", id) }

// privileges are the privilege names GRANT and REVOKE accept for GitOps users:
// database and table privileges, no administrative ones.
func (mysqlDialect) privileges() map[string]bool { return mysqlPrivileges }

var mysqlPrivileges = privilegeSet(commonPrivileges)
