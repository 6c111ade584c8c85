package dbop

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/example/mysql-operator/topology"
	"github.com/go-sql-driver/mysql"
)

func TestParseVersion(t *testing.T) {
	cases := []struct {
		in      string
		want    Version
		dialect Dialect
	}{
		{"10.11.14-MariaDB-0+deb12u2-log", Version{EngineMariaDB, 10, 11, 14, "-MariaDB-0+deb12u2-log"}, MariaDB},
		{"11.4.2-MariaDB", Version{EngineMariaDB, 11, 4, 2, "-MariaDB"}, MariaDB},
		{"10.6.18-MariaDB-log", Version{EngineMariaDB, 10, 6, 18, "-MariaDB-log"}, nil},
		{"8.4.3", Version{EngineMySQL, 8, 4, 3, ""}, MySQL},
		{"9.7.0", Version{EngineMySQL, 9, 7, 0, ""}, MySQL},
		{" 8.4.0-log\n", Version{EngineMySQL, 8, 4, 0, "-log"}, MySQL},
		{"8.0.40-commercial", Version{EngineMySQL, 8, 0, 40, "-commercial"}, nil},
		{"8.3.99", Version{EngineMySQL, 8, 3, 99, ""}, nil},
	}
	for _, c := range cases {
		got, err := ParseVersion(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseVersion(%q) = %+v, %v; want %+v", c.in, got, err, c.want)
			continue
		}
		d, err := DialectFor(got)
		if d != c.dialect || (d == nil) != errors.Is(err, ErrUnsupportedVersion) {
			t.Errorf("DialectFor(%s) = %v, %v; want %v", got, d, err, c.dialect)
		}
	}
	for _, bad := range []string{"", "8", "8.4", "8.4.x", "a.b.c", "8.4.3.1", "-1.2.3"} {
		if v, err := ParseVersion(bad); err == nil {
			t.Errorf("ParseVersion(%q) = %+v, want an error", bad, v)
		}
	}
}

func TestParseBinlogInfo(t *testing.T) {
	cases := []struct {
		in     string
		flavor topology.Flavor
		want   BinlogInfo
	}{
		// As mariadb-backup 10.11 wrote it in the seeding test.
		{"mysql-bin.000001\t1747\t0-1-8\n", topology.FlavorMariaDB, BinlogInfo{"mysql-bin.000001", 1747, "0-1-8"}},
		{"mysql-bin.000003\t42\t0-1-8,1-2-3", topology.FlavorMariaDB, BinlogInfo{"mysql-bin.000003", 42, "0-1-8,1-2-3"}},
		{"mysql-bin.000001\t329\n", topology.FlavorMariaDB, BinlogInfo{"mysql-bin.000001", 329, ""}},
		{"binlog.000002\t197\t3E11FA47-71CA-11E1-9E33-C80AA9429562:1-5,\n8a94f357-aab4-11df-86ab-c80aa9429563:1-3\n",
			topology.FlavorMySQL, BinlogInfo{"binlog.000002", 197,
				"3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5,8a94f357-aab4-11df-86ab-c80aa9429563:1-3"}},
	}
	for _, c := range cases {
		got, err := ParseBinlogInfo(c.in, c.flavor)
		if err != nil || got != c.want {
			t.Errorf("ParseBinlogInfo(%q) = %+v, %v; want %+v", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"", "mysql-bin.000001", "mysql-bin.000001\tx\t0-1-8", "f\t1\t0-1"} {
		if got, err := ParseBinlogInfo(bad, topology.FlavorMariaDB); err == nil {
			t.Errorf("ParseBinlogInfo(%q) = %+v, want an error", bad, got)
		}
	}
}

func TestSeedState(t *testing.T) {
	state, pos, err := SeedState(BinlogInfo{GTIDs: "0-1-20"}, "0-2-9,0-1-15")
	if err != nil || state != "0-1-20,0-2-9" || pos != "0-1-20" {
		t.Errorf("SeedState = %q, %q, %v", state, pos, err)
	}
	if _, _, err := SeedState(BinlogInfo{GTIDs: "x"}, ""); err == nil {
		t.Error("SeedState accepted a bad position")
	}
}

func TestSanitizeWithholdsSecretMessages(t *testing.T) {
	me := &mysql.MySQLError{Number: 1470, SQLState: [5]byte{'H', 'Y', '0', '0', '0'},
		Message: "String 'hunter2hunter2' is too long for MASTER_PASSWORD"}
	err := sanitize(me, true)
	if strings.Contains(err.Error(), "hunter2") {
		t.Errorf("secret echoed: %v", err)
	}
	var got *mysql.MySQLError
	if !errors.As(err, &got) || got.Number != 1470 {
		t.Errorf("error number lost: %v", err)
	}
	if sanitize(me, false) != error(me) {
		t.Error("non-secret error changed")
	}
}

func TestSourceValidation(t *testing.T) {
	ok := Source{Host: "db-0", Port: 3306, User: ReplUser, Password: "pw"}
	for name, s := range map[string]Source{
		"host": {Port: 3306, User: "u"}, "port": {Host: "h", Port: 70000, User: "u"}, "user": {Host: "h", Port: 1},
		"nul": {Host: "h", Port: 1, User: "u", Password: "a\x00b"},
	} {
		for _, d := range []Dialect{MySQL, MariaDB} {
			if _, err := d.ChangeSource(s); err == nil {
				t.Errorf("%s: %s accepted a bad source", name, d.Engine())
			} else if strings.Contains(err.Error(), "a\x00b") {
				t.Errorf("%s: error echoes the password", name)
			}
		}
	}
	for _, d := range []Dialect{MySQL, MariaDB} {
		if _, err := d.ChangeSource(ok); err != nil {
			t.Errorf("%s: %v", d.Engine(), err)
		}
		if _, err := d.EnableSemiSyncSource(0); err == nil {
			t.Errorf("%s accepted wait count 0", d.Engine())
		}
	}
	if _, err := MariaDB.SetGTIDSlavePos("0-1-5,0-2-6"); err == nil {
		t.Error("gtid_slave_pos with two GTIDs in a domain accepted")
	}
	if got := waitSeconds(1500 * time.Millisecond); got != 2 {
		t.Errorf("waitSeconds(1.5s) = %d", got)
	}
	if got := waitSeconds(-time.Second); got != 1 {
		t.Errorf("waitSeconds(-1s) = %d", got)
	}
}

// TestMySQLStatusParsing feeds MySQL 8.4 column and variable names (no MySQL
// server is available) through the status parsing and the conversion to
// topology.Instance.
func TestMySQLStatusParsing(t *testing.T) {
	row := map[string]string{"Source_Host": "orders-0.orders", "Source_Port": "3306", "Replica_IO_Running": "Yes",
		"Replica_SQL_Running": "Yes", "Last_IO_Errno": "0", "Last_IO_Error": "", "Last_SQL_Errno": "0",
		"Retrieved_Gtid_Set": "3e11fa47-71ca-11e1-9e33-c80aa9429562:5-10", "Seconds_Behind_Source": "3"}
	vars := map[string]string{"rpl_semi_sync_source_enabled": "OFF", "rpl_semi_sync_replica_enabled": "ON",
		"rpl_semi_sync_source_wait_for_replica_count": "2", "rpl_semi_sync_source_timeout": "4294967295"}
	status := map[string]string{"Rpl_semi_sync_replica_status": "ON", "Rpl_semi_sync_source_clients": "0"}
	st := &Status{Version: Version{Engine: EngineMySQL, Major: 8, Minor: 4, Patch: 3}, ServerID: 2,
		ServerUUID: "8a94f357-aab4-11df-86ab-c80aa9429563", ReadOnly: true, SuperReadOnly: true,
		GTIDExecuted: "3E11FA47-71CA-11E1-9E33-C80AA9429562:1-9,\n8a94f357-aab4-11df-86ab-c80aa9429563:1",
		Replica:      parseReplica(row, MySQL.names()), SemiSync: parseSemiSync(vars, status, MySQL.names())}
	in, err := st.Instance(1, "orders-1.orders", 3306)
	if err != nil {
		t.Fatal(err)
	}
	r := in.Replication
	if r == nil || r.SourceHost != "orders-0.orders" || r.SourcePort != 3306 || !r.IORunning || !r.SQLRunning ||
		r.Lag == nil || *r.Lag != 3*time.Second || r.Retrieved.String() != "3e11fa47-71ca-11e1-9e33-c80aa9429562:5-10" {
		t.Errorf("replication = %+v", r)
	}
	if in.Executed.String() != "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-9,8a94f357-aab4-11df-86ab-c80aa9429563:1" ||
		in.SourceID != st.ServerUUID || !in.ReadOnly || in.Writable || in.SemiSyncSource || !in.SemiSyncReplica ||
		in.SemiSyncWaitCount != 2 {
		t.Errorf("instance = %+v", in)
	}
	// read_only without super_read_only: neither read-only for replicas nor writable.
	st.SuperReadOnly = false
	if in, _ := st.Instance(1, "h", 1); in.ReadOnly || in.Writable {
		t.Errorf("read_only=ON super_read_only=OFF gave ReadOnly=%v Writable=%v", in.ReadOnly, in.Writable)
	}
	if st.SemiSync.TimeoutMillis != semiSyncTimeout || st.Replica.IOState != "Yes" {
		t.Errorf("semi-sync = %+v", st.SemiSync)
	}
	if empty, err := st.Empty(); err != nil || empty {
		t.Errorf("Empty = %v, %v", empty, err)
	}
}

// TestMySQLSemiSyncAcks: the wait count MySQL's EnableSemiSyncSource sets
// (rpl_semi_sync_source_wait_for_replica_count, its second placeholder) is
// what SemiSyncAcks tells the failover quorum, for every cluster size.
func TestMySQLSemiSyncAcks(t *testing.T) {
	for w := 1; w <= 5; w++ {
		ss, err := MySQL.EnableSemiSyncSource(w)
		if err != nil {
			t.Fatal(err)
		}
		if len(ss) != 1 || !strings.Contains(ss[0].SQL, "rpl_semi_sync_source_wait_for_replica_count = ?") || len(ss[0].Args) != 2 {
			t.Fatalf("EnableSemiSyncSource(%d) = %+v", w, ss)
		}
		if set := ss[0].Args[1]; set != MySQL.SemiSyncAcks(w) {
			t.Errorf("EnableSemiSyncSource(%d) sets the wait count to %v, SemiSyncAcks says %d", w, set, MySQL.SemiSyncAcks(w))
		}
	}
	if MySQL.SemiSyncAcks(0) != 0 || MariaDB.SemiSyncAcks(0) != 0 {
		t.Errorf("a single instance waits for acknowledgements")
	}
}
