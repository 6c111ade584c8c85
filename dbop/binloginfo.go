package dbop

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/example/mysql-operator/topology"
)

// BinlogInfo is the content of a backup's xtrabackup_binlog_info (written by
// mariadb-backup and xtrabackup): the binary log coordinates and the GTID position
// of the last transaction in the backup.
type BinlogInfo struct {
	// File is the binary log file name.
	File string
	// Position is the offset in File.
	Position uint64
	// GTIDs is the position at the backup: a MariaDB "domain-server-seq" list or a
	// MySQL GTID set, "" when the source had no GTID.
	GTIDs string
}

// ParseBinlogInfo parses xtrabackup_binlog_info: "file<TAB>position[<TAB>gtids]",
// where gtids may span lines (MySQL prints ",\n" between sources). The GTIDs are
// validated in the given flavor and returned in canonical form.
func ParseBinlogInfo(content string, flavor topology.Flavor) (BinlogInfo, error) {
	fields := strings.Fields(content)
	if len(fields) < 2 {
		return BinlogInfo{}, fmt.Errorf("binlog info: want file and position, got %d fields", len(fields))
	}
	pos, err := strconv.ParseUint(fields[1], 10, 64)
	if err != nil {
		return BinlogInfo{}, fmt.Errorf("binlog info: bad position %q", fields[1])
	}
	set, err := topology.ParseGTIDSet(flavor, strings.Join(fields[2:], ""))
	if err != nil {
		return BinlogInfo{}, fmt.Errorf("binlog info: %w", err)
	}
	return BinlogInfo{File: fields[0], Position: pos, GTIDs: set.String()}, nil
}

// SeedState returns what a MariaDB instance restored from a backup must record
// before it replicates: gtid_slave_pos is the backup's position, and
// gtid_binlog_state is the donor's @@gtid_binlog_state read just before the backup
// started, united with that position, so that the restored instance knows the
// (domain, server_id) history the errant-transaction check compares (see package
// topology). Entries of the donor state are at or below the backup position.
func SeedState(info BinlogInfo, donorBinlogStateBefore string) (binlogState, slavePos string, err error) {
	pos, err := topology.ParseMariaDBGTIDSet(info.GTIDs)
	if err != nil {
		return "", "", fmt.Errorf("seed state: backup position: %w", err)
	}
	before, err := topology.ParseMariaDBGTIDSet(donorBinlogStateBefore)
	if err != nil {
		return "", "", fmt.Errorf("seed state: donor state: %w", err)
	}
	return before.Union(pos).String(), pos.Position().String(), nil
}
