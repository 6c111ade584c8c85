package dbop

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/go-sql-driver/mysql"
)

// erNoSuchThread is the server error for killing a connection that already ended.
const erNoSuchThread = 1094

// keptCommands are server threads that are not client connections: replication
// senders to replicas, replication receivers and appliers, background daemons.
var keptCommands = []string{"Binlog Dump", "Binlog Dump GTID", "Daemon", "Slave_IO", "Slave_SQL",
	"Slave_worker", "Connect"}

// keptUsers are accounts whose connections are never killed: the operator's own,
// and the pseudo-users of server threads.
var keptUsers = []string{AdminUser, ReplUser, AgentUser, "system user", "event_scheduler", ""}

// Connection is one entry of the process list.
type Connection struct {
	// ID is the connection id.
	ID int64
	// User is the account name.
	User string
	// Host is the client host (and port).
	Host string
	// Command is the thread's command ("Query", "Sleep", "Binlog Dump GTID", ...).
	Command string
}

// killable reports whether KillConnections ends c: client connections of other
// accounts than the operator's, not server or replication threads.
func (c Connection) killable() bool {
	return !slices.Contains(keptUsers, c.User) && !slices.Contains(keptCommands, c.Command)
}

// Connections lists every connection but the caller's.
func (i *Instance) Connections(ctx context.Context) ([]Connection, error) {
	d, err := i.Dialect(ctx)
	if err != nil {
		return nil, fmt.Errorf("list connections: %w", err)
	}
	s := d.ListConnections()
	rows, err := i.db.QueryContext(ctx, s.SQL, s.Args...)
	if err != nil {
		return nil, fmt.Errorf("list connections on %s: %w", i.addr, err)
	}
	defer func() { _ = rows.Close() }()
	var out []Connection
	for rows.Next() {
		var c Connection
		if err := rows.Scan(&c.ID, &c.User, &c.Host, &c.Command); err != nil {
			return nil, fmt.Errorf("list connections on %s: %w", i.addr, err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list connections on %s: %w", i.addr, err)
	}
	return out, nil
}

// KillConnections kills every client connection except the operator's own
// accounts and the replication and server threads, and returns how many it
// killed. Connections that end meanwhile are not an error.
func (i *Instance) KillConnections(ctx context.Context) (int, error) {
	conns, err := i.Connections(ctx)
	if err != nil {
		return 0, err
	}
	d, _ := i.Dialect(ctx) // known: Connections succeeded
	n := 0
	for _, c := range conns {
		if !c.killable() {
			continue
		}
		s := d.KillConnection(c.ID)
		_, err := i.db.ExecContext(ctx, s.SQL, s.Args...)
		var me *mysql.MySQLError
		if errors.As(err, &me) && me.Number == erNoSuchThread {
			continue
		}
		if err != nil {
			return n, fmt.Errorf("kill connection %d on %s: %w", c.ID, i.addr, err)
		}
		n++
	}
	return n, nil
}
