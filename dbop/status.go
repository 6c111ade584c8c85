package dbop

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"time"

	"github.com/example/mysql-operator/topology"
)

// Status is one observation of an instance, read in one round trip.
type Status struct {
	// Version is the parsed VERSION().
	Version Version
	// ServerID is @@server_id.
	ServerID uint32
	// ServerUUID is @@server_uuid (MySQL; "" on MariaDB).
	ServerUUID string
	// ReadOnly is @@read_only.
	ReadOnly bool
	// SuperReadOnly is @@super_read_only (MySQL; false on MariaDB).
	SuperReadOnly bool
	// GTIDExecuted is @@gtid_executed (MySQL).
	GTIDExecuted string
	// GTIDBinlogState, GTIDSlavePos and GTIDCurrentPos are MariaDB's GTID
	// variables.
	GTIDBinlogState string
	// GTIDSlavePos is @@gtid_slave_pos (MariaDB).
	GTIDSlavePos string
	// GTIDCurrentPos is @@gtid_current_pos (MariaDB).
	GTIDCurrentPos string
	// Replica is the replication status, nil when no source is configured.
	Replica *ReplicaStatus
	// SemiSync is the semi-synchronous replication state.
	SemiSync SemiSyncStatus
	// CertificateNotAfter is when the certificate the server presents to
	// new TLS sessions expires (Ssl_server_not_after); zero when it has
	// none.
	CertificateNotAfter time.Time
}

// ReplicaStatus is the part of SHOW REPLICA STATUS the operator uses.
type ReplicaStatus struct {
	// SourceHost and SourcePort are the configured source.
	SourceHost string
	// SourcePort is the configured source port.
	SourcePort int
	// IOState is the receiver thread: "Yes", "No" or "Connecting".
	IOState string
	// SQLRunning is true when the applier thread runs.
	SQLRunning bool
	// LastIOErrno and LastIOError are the receiver's last error.
	LastIOErrno int
	// LastIOError is the receiver's last error message.
	LastIOError string
	// LastSQLErrno and LastSQLError are the applier's last error.
	LastSQLErrno int
	// LastSQLError is the applier's last error message.
	LastSQLError string
	// Retrieved is Retrieved_Gtid_Set (MySQL) or Gtid_IO_Pos (MariaDB).
	Retrieved string
	// SecondsBehind is Seconds_Behind_Source; nil when NULL.
	SecondsBehind *int64
	// TLS says replication to the source is configured over TLS
	// (Master_SSL_Allowed, Source_SSL_Allowed).
	TLS bool
}

// SemiSyncStatus is the semi-sync configuration and state.
type SemiSyncStatus struct {
	// SourceEnabled is rpl_semi_sync_{source,master}_enabled.
	SourceEnabled bool
	// SourceActive is Rpl_semi_sync_{source,master}_status: the source currently
	// waits for acknowledgements.
	SourceActive bool
	// WaitCount is how many acknowledgements the source waits for (1 on MariaDB).
	WaitCount int
	// TimeoutMillis is rpl_semi_sync_{source,master}_timeout.
	TimeoutMillis uint64
	// Clients is the number of semi-sync replicas connected to this source.
	Clients int
	// YesTx and NoTx count the commits acknowledged and not acknowledged.
	YesTx uint64
	// NoTx counts the commits that were not acknowledged (asynchronous fallback).
	NoTx uint64
	// WaitSessions is how many sessions wait for an acknowledgement now.
	WaitSessions int
	// ReplicaEnabled is rpl_semi_sync_{replica,slave}_enabled.
	ReplicaEnabled bool
	// ReplicaActive is Rpl_semi_sync_{replica,slave}_status.
	ReplicaActive bool
}

// Status reads the instance's state in one round trip (one COM_QUERY carrying
// four statements), once the dialect is known.
func (i *Instance) Status(ctx context.Context) (*Status, error) {
	d, err := i.Dialect(ctx)
	if err != nil {
		return nil, err
	}
	st, err := readStatus(ctx, i.db, d)
	if err != nil {
		return nil, fmt.Errorf("read status of %s: %w", i.addr, err)
	}
	i.noteVersion(st.Version)
	return st, nil
}

// readStatus runs the dialect's status query and parses its four result sets.
func readStatus(ctx context.Context, db *sql.DB, d Dialect) (*Status, error) {
	rows, err := db.QueryContext(ctx, d.StatusQuery())
	if err != nil {
		return nil, err
	}
	defer func() { _ = rows.Close() }()
	st := &Status{}
	if err := scanGlobals(rows, st); err != nil {
		return nil, err
	}
	sets := make([][]map[string]string, 3)
	for k := range sets {
		if !rows.NextResultSet() {
			return nil, fmt.Errorf("status: result set %d missing: %v", k+2, rows.Err())
		}
		if sets[k], err = scanMaps(rows); err != nil {
			return nil, err
		}
	}
	n := d.names()
	if len(sets[0]) > 0 && sets[0][0][n.sourceHost] != "" {
		st.Replica = parseReplica(sets[0][0], n)
	}
	globals := keyValues(sets[2])
	st.SemiSync = parseSemiSync(keyValues(sets[1]), globals, n)
	st.CertificateNotAfter = parseCertificateTime(globals["Ssl_server_not_after"])
	return st, rows.Err()
}

// scanGlobals reads the first result set: one row of global variables.
func scanGlobals(rows *sql.Rows, st *Status) error {
	if !rows.Next() {
		return fmt.Errorf("status: no global variables row: %v", rows.Err())
	}
	var version string
	var ro, sro int
	err := rows.Scan(&version, &st.ServerID, &ro, &sro, &st.ServerUUID, &st.GTIDExecuted,
		&st.GTIDBinlogState, &st.GTIDSlavePos, &st.GTIDCurrentPos)
	if err != nil {
		return fmt.Errorf("status: %w", err)
	}
	st.ReadOnly, st.SuperReadOnly = ro != 0, sro != 0
	if st.Version, err = ParseVersion(version); err != nil {
		return err
	}
	for rows.Next() { // drain
	}
	return nil
}

// scanMaps reads every row of the current result set as column name → text.
func scanMaps(rows *sql.Rows) ([]map[string]string, error) {
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	var out []map[string]string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for k := range vals {
			ptrs[k] = &vals[k]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		m := make(map[string]string, len(cols))
		for k, c := range cols {
			if vals[k].Valid {
				m[c] = vals[k].String
			}
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// keyValues turns SHOW VARIABLES / SHOW STATUS rows into name → value.
func keyValues(rows []map[string]string) map[string]string {
	out := make(map[string]string, len(rows))
	for _, r := range rows {
		out[r["Variable_name"]] = r["Value"]
	}
	return out
}

// parseReplica extracts the replica fields from a SHOW REPLICA STATUS row.
func parseReplica(r map[string]string, n statusNames) *ReplicaStatus {
	rs := &ReplicaStatus{
		SourceHost: r[n.sourceHost], IOState: r[n.ioRunning], SQLRunning: r[n.sqlRunning] == "Yes",
		LastIOError: r["Last_IO_Error"], LastSQLError: r["Last_SQL_Error"], Retrieved: r[n.retrieved],
	}
	rs.SourcePort, _ = strconv.Atoi(r[n.sourcePort])
	rs.TLS = r[n.ssl] == "Yes"
	rs.LastIOErrno, _ = strconv.Atoi(r["Last_IO_Errno"])
	rs.LastSQLErrno, _ = strconv.Atoi(r["Last_SQL_Errno"])
	if v, err := strconv.ParseInt(r[n.lag], 10, 64); err == nil {
		rs.SecondsBehind = &v
	}
	return rs
}

// parseSemiSync extracts the semi-sync fields from SHOW VARIABLES and SHOW STATUS.
func parseSemiSync(vars, status map[string]string, n statusNames) SemiSyncStatus {
	s := SemiSyncStatus{
		SourceEnabled: vars[n.semiSourceEnabled] == "ON", ReplicaEnabled: vars[n.semiReplicaEnabled] == "ON",
		SourceActive: status[n.semiSourceStatus] == "ON", ReplicaActive: status[n.semiReplicaStatus] == "ON",
		WaitCount: 1,
	}
	if n.semiWaitCount != "" {
		s.WaitCount, _ = strconv.Atoi(vars[n.semiWaitCount])
	}
	s.TimeoutMillis, _ = strconv.ParseUint(vars[n.semiTimeout], 10, 64)
	s.Clients, _ = strconv.Atoi(status[n.semiClients])
	s.YesTx, _ = strconv.ParseUint(status[n.semiYesTx], 10, 64)
	s.NoTx, _ = strconv.ParseUint(status[n.semiNoTx], 10, 64)
	s.WaitSessions, _ = strconv.Atoi(status[n.semiWaitSessions])
	return s
}

// certificateTime is how both engines print a certificate's validity
// (OpenSSL's ASN1_TIME_print).
const certificateTime = "Jan _2 15:04:05 2006 GMT"

// parseCertificateTime reads a certificate time the server printed; zero
// when it printed none (no certificate) or what it printed cannot be read.
func parseCertificateTime(v string) time.Time {
	t, err := time.Parse(certificateTime, v)
	if err != nil {
		return time.Time{}
	}
	return t.UTC()
}

// Flavor returns the GTID flavor of the observed server.
func (s *Status) Flavor() topology.Flavor {
	if s.Version.Engine == EngineMariaDB {
		return topology.FlavorMariaDB
	}
	return topology.FlavorMySQL
}

// Executed returns the transactions the instance has: gtid_executed on MySQL,
// gtid_binlog_state united with gtid_slave_pos on MariaDB (see package topology).
func (s *Status) Executed() (topology.GTIDSet, error) {
	if s.Flavor() == topology.FlavorMariaDB {
		set, err := topology.MariaDBExecuted(s.GTIDBinlogState, s.GTIDSlavePos)
		return topology.FromMariaDB(set), err
	}
	return topology.ParseGTIDSet(topology.FlavorMySQL, s.GTIDExecuted)
}

// Empty reports whether the instance has no transaction at all.
func (s *Status) Empty() (bool, error) {
	e, err := s.Executed()
	return e.IsEmpty(), err
}

// SourceID returns what identifies the GTIDs this instance originates: server_uuid
// on MySQL, server_id on MariaDB.
func (s *Status) SourceID() string {
	if s.Flavor() == topology.FlavorMariaDB {
		return strconv.FormatUint(uint64(s.ServerID), 10)
	}
	return s.ServerUUID
}

// Instance converts the observation to the input of topology.Decide. host and port
// are the instance's address as its replicas reach it; pod fields are left to the
// caller.
func (s *Status) Instance(index int, host string, port int) (topology.Instance, error) {
	exec, err := s.Executed()
	if err != nil {
		return topology.Instance{}, fmt.Errorf("instance %d: executed GTIDs: %w", index, err)
	}
	in := topology.Instance{Index: index, Host: host, Port: port, Reachable: true, SourceID: s.SourceID(),
		ReadOnly: s.ReadOnly, Writable: !s.ReadOnly, Executed: exec, SemiSyncSource: s.SemiSync.SourceEnabled,
		SemiSyncWaitCount: s.SemiSync.WaitCount, SemiSyncReplica: s.SemiSync.ReplicaEnabled,
		SemiSyncWaitSessions: s.SemiSync.WaitSessions}
	if s.Flavor() == topology.FlavorMySQL {
		in.ReadOnly = s.SuperReadOnly
	}
	if r := s.Replica; r != nil {
		ret, err := topology.ParseGTIDSet(s.Flavor(), r.Retrieved)
		if err != nil {
			return topology.Instance{}, fmt.Errorf("instance %d: retrieved GTIDs: %w", index, err)
		}
		in.Replication = &topology.Replication{SourceHost: r.SourceHost, SourcePort: r.SourcePort,
			IORunning: r.IOState == "Yes", IOConnecting: r.IOState == "Connecting", SQLRunning: r.SQLRunning,
			LastIOError: r.LastIOError, LastSQLError: r.LastSQLError, Retrieved: ret,
			IOErrorTransient: r.LastIOErrno >= 2000 && r.LastIOErrno < 3000, TLS: r.TLS}
		if r.SecondsBehind != nil {
			lag := time.Duration(*r.SecondsBehind) * time.Second
			in.Replication.Lag = &lag
		}
	}
	return in, nil
}
