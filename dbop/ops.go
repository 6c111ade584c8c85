package dbop

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/go-sql-driver/mysql"
)

// ErrWaitTimeout is returned by WaitForGTID when the GTIDs did not arrive in time.
var ErrWaitTimeout = errors.New("timed out waiting for GTIDs")

// withheld replaces the message of a server error for a statement that carries a
// secret: some messages quote the value that failed (error 1470 prints the start of
// a too-long MASTER_PASSWORD). The number and SQLSTATE stay for errors.As.
const withheld = "message withheld: the statement carries a secret"

// sanitize returns err fit for logs and status: server messages of statements with
// secrets are withheld. The statement text is never part of an error.
func sanitize(err error, secret bool) error {
	var me *mysql.MySQLError
	if secret && errors.As(err, &me) {
		return &mysql.MySQLError{Number: me.Number, SQLState: me.SQLState, Message: withheld}
	}
	return err
}

// exec runs statements in order; the error names the operation and the address,
// never the statement.
func (i *Instance) exec(ctx context.Context, op string, ss []Stmt) error {
	for _, s := range ss {
		if _, err := i.db.ExecContext(ctx, s.SQL, s.Args...); err != nil {
			return fmt.Errorf("%s on %s: %w", op, i.addr, sanitize(err, s.Secret))
		}
	}
	return nil
}

// run detects the dialect, renders with build and executes.
func (i *Instance) run(ctx context.Context, op string, build func(Dialect) ([]Stmt, error)) error {
	d, err := i.Dialect(ctx)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	ss, err := build(d)
	if err != nil {
		return fmt.Errorf("%s on %s: %w", op, i.addr, err)
	}
	return i.exec(ctx, op, ss)
}

// plain adapts a statement list without error to run.
func plain(f func(Dialect) []Stmt) func(Dialect) ([]Stmt, error) {
	return func(d Dialect) ([]Stmt, error) { return f(d), nil }
}

// SetReadOnly stops writes by ordinary users (MySQL super_read_only, MariaDB
// read_only). It waits for running transactions to commit.
func (i *Instance) SetReadOnly(ctx context.Context) error {
	return i.run(ctx, "set read-only", plain(Dialect.SetReadOnly))
}

// SetWritable allows writes.
func (i *Instance) SetWritable(ctx context.Context) error {
	return i.run(ctx, "set writable", plain(Dialect.SetWritable))
}

// ConfigureReplica makes the instance replicate from src: stop replication, point
// it at src with GTID auto-positioning, set the semi-sync acknowledgement, start.
func (i *Instance) ConfigureReplica(ctx context.Context, src Source, semiSync bool) error {
	return i.run(ctx, "change replication source", func(d Dialect) ([]Stmt, error) {
		change, err := d.ChangeSource(src)
		if err != nil {
			return nil, err
		}
		semi := d.DisableSemiSyncReplica()
		if semiSync {
			semi = d.EnableSemiSyncReplica()
		}
		ss := append(d.StopReplica(), change...)
		ss = append(ss, d.DisableSemiSyncSource()...)
		ss = append(ss, semi...)
		return append(ss, d.StartReplica()...), nil
	})
}

// StartReplica starts replication.
func (i *Instance) StartReplica(ctx context.Context) error {
	return i.run(ctx, "start replica", plain(Dialect.StartReplica))
}

// StopReplica stops replication.
func (i *Instance) StopReplica(ctx context.Context) error {
	return i.run(ctx, "stop replica", plain(Dialect.StopReplica))
}

// StopIOThread stops only the receiver thread: the replica applies what it has
// and receives nothing more (fencing before a failover).
func (i *Instance) StopIOThread(ctx context.Context) error {
	return i.run(ctx, "stop replica I/O thread", plain(Dialect.StopIOThread))
}

// ResetReplica stops replication and forgets its configuration.
func (i *Instance) ResetReplica(ctx context.Context) error {
	return i.run(ctx, "reset replica", func(d Dialect) ([]Stmt, error) {
		return append(d.StopReplica(), d.ResetReplica()...), nil
	})
}

// Promote makes the instance a primary: replication stopped and forgotten,
// semi-sync replica side off, semi-sync source on with waitCount acknowledgements
// (off when waitCount is 0, a single instance), writable.
func (i *Instance) Promote(ctx context.Context, waitCount int) error {
	return i.run(ctx, "promote", func(d Dialect) ([]Stmt, error) {
		ss := append(d.StopReplica(), d.ResetReplica()...)
		ss = append(ss, d.DisableSemiSyncReplica()...)
		if waitCount > 0 {
			semi, err := d.EnableSemiSyncSource(waitCount)
			if err != nil {
				return nil, err
			}
			ss = append(ss, semi...)
		} else {
			ss = append(ss, d.DisableSemiSyncSource()...)
		}
		return append(ss, d.SetWritable()...), nil
	})
}

// EnableSemiSyncSource turns semi-sync on as source with waitCount
// acknowledgements (MariaDB: one) and a timeout that never falls back to async.
func (i *Instance) EnableSemiSyncSource(ctx context.Context, waitCount int) error {
	return i.run(ctx, "enable semi-sync source", func(d Dialect) ([]Stmt, error) {
		return d.EnableSemiSyncSource(waitCount)
	})
}

// DisableSemiSyncSource turns semi-sync off as source.
func (i *Instance) DisableSemiSyncSource(ctx context.Context) error {
	return i.run(ctx, "disable semi-sync source", plain(Dialect.DisableSemiSyncSource))
}

// EnableSemiSyncReplica turns semi-sync on as replica; it takes effect when the
// I/O thread (re)starts.
func (i *Instance) EnableSemiSyncReplica(ctx context.Context) error {
	return i.run(ctx, "enable semi-sync replica", plain(Dialect.EnableSemiSyncReplica))
}

// DisableSemiSyncReplica turns semi-sync off as replica.
func (i *Instance) DisableSemiSyncReplica(ctx context.Context) error {
	return i.run(ctx, "disable semi-sync replica", plain(Dialect.DisableSemiSyncReplica))
}

// SetGTIDSlavePos sets MariaDB's replication position (after restoring a backup;
// replication must be stopped).
func (i *Instance) SetGTIDSlavePos(ctx context.Context, pos string) error {
	return i.run(ctx, "set gtid_slave_pos", func(d Dialect) ([]Stmt, error) { return d.SetGTIDSlavePos(pos) })
}

// SetGTIDBinlogState sets MariaDB's binlog GTID state (after restoring a backup,
// while the binary log is still empty).
func (i *Instance) SetGTIDBinlogState(ctx context.Context, state string) error {
	return i.run(ctx, "set gtid_binlog_state", func(d Dialect) ([]Stmt, error) { return d.SetGTIDBinlogState(state) })
}

// CloneFrom replaces the instance's data with donor's (MySQL clone plugin).
func (i *Instance) CloneFrom(ctx context.Context, donor Source) error {
	return i.run(ctx, "clone", func(d Dialect) ([]Stmt, error) { return d.CloneFrom(donor) })
}

// Shutdown stops the server. The connection it was sent on breaks as the
// server goes: an error reading the answer is not a failure.
func (i *Instance) Shutdown(ctx context.Context) error {
	err := i.run(ctx, "shut down", plain(Dialect.Shutdown))
	if err != nil && (errors.Is(err, mysql.ErrInvalidConn) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, driver.ErrBadConn)) {
		return nil
	}
	return err
}

// ResetBinlogs deletes the binary logs and the GTID history.
func (i *Instance) ResetBinlogs(ctx context.Context) error {
	return i.run(ctx, "reset binary logs", plain(Dialect.ResetBinlogs))
}

// WaitForGTID waits until the instance has executed gtids (a MySQL GTID set, or a
// MariaDB position: see topology.GTIDSet.WaitTarget), for at most timeout. It
// waits in server-side slices shorter than the read timeout, so a long wait is not
// mistaken for a dead connection. It returns ErrWaitTimeout when time is up.
func (i *Instance) WaitForGTID(ctx context.Context, gtids string, timeout time.Duration) error {
	d, err := i.Dialect(ctx)
	if err != nil {
		return fmt.Errorf("wait for GTIDs: %w", err)
	}
	deadline := time.Now().Add(timeout)
	slice := max(i.readTimeout/2, time.Second)
	for {
		wait := min(time.Until(deadline), slice)
		s := d.WaitForGTID(gtids, wait)
		var res int64
		if err := i.db.QueryRowContext(ctx, s.SQL, s.Args...).Scan(&res); err != nil {
			return fmt.Errorf("wait for GTIDs on %s: %w", i.addr, err)
		}
		if !d.WaitTimedOut(res) {
			return nil
		}
		if time.Until(deadline) <= 0 {
			return fmt.Errorf("wait for GTIDs on %s: %w", i.addr, ErrWaitTimeout)
		}
	}
}

// ReloadTLS makes the server read its certificate files again.
func (i *Instance) ReloadTLS(ctx context.Context) error {
	d, err := i.Dialect(ctx)
	if err != nil {
		return err
	}
	return i.exec(ctx, "reload the TLS certificate", d.ReloadTLS())
}
