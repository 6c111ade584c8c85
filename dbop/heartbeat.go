package dbop

import "context"

// HeartbeatDatabase is the operator's own database on the servers. It holds
// one table, heartbeat, of one row, written only when commits on the
// primary are stuck on a lost semi-sync acknowledgement (Heartbeat). No
// MySQLDatabase may take its name.
const HeartbeatDatabase = "mysql_operator"

// heartbeat is the statements of Heartbeat, the same on both engines.
func heartbeat() []Stmt {
	return stmts("CREATE DATABASE IF NOT EXISTS "+HeartbeatDatabase,
		"CREATE TABLE IF NOT EXISTS "+HeartbeatDatabase+".heartbeat (id TINYINT UNSIGNED PRIMARY KEY, at TIMESTAMP(6) NOT NULL)",
		"REPLACE INTO "+HeartbeatDatabase+".heartbeat VALUES (1, NOW(6))")
}

// Heartbeat writes the heartbeat row on the primary (creating its database
// and table the first time): a transaction whose semi-sync acknowledgement
// also releases the commits waiting for acknowledgements that were lost
// (topology.ActionHeartbeat). It waits for that acknowledgement.
func (i *Instance) Heartbeat(ctx context.Context) error {
	return i.exec(ctx, "write the heartbeat", heartbeat())
}
