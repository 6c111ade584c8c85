package dbop

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
)

// BinaryLog is one file of a server's binary log.
type BinaryLog struct {
	// Name is the file's name, in the binary log's directory.
	Name string
	// Size is its size in bytes so far.
	Size int64
}

// The statements of the binary log archive, the same on both engines: the
// agent's account holds BINLOG MONITOR (MariaDB) or REPLICATION CLIENT
// (MySQL) for the list, and RELOAD for the rotation.
const (
	listBinaryLogs = "SHOW BINARY LOGS"
	binlogBasename = "SELECT @@log_bin_basename"
	// rotateBinaryLog closes the current file and opens the next; it is
	// never written to the binary log itself.
	rotateBinaryLog = "FLUSH NO_WRITE_TO_BINLOG BINARY LOGS"
)

// BinaryLogs lists the server's binary log files, oldest first; the last
// is the one being written.
func (i *Instance) BinaryLogs(ctx context.Context) ([]BinaryLog, error) {
	rows, err := i.db.QueryContext(ctx, listBinaryLogs)
	if err != nil {
		return nil, fmt.Errorf("list the binary logs on %s: %w", i.addr, err)
	}
	defer rows.Close()
	maps, err := scanMaps(rows)
	if err != nil {
		return nil, fmt.Errorf("list the binary logs on %s: %w", i.addr, err)
	}
	out := make([]BinaryLog, 0, len(maps))
	for _, m := range maps {
		size, err := strconv.ParseInt(m["File_size"], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("list the binary logs on %s: size of %s: %w", i.addr, m["Log_name"], err)
		}
		out = append(out, BinaryLog{Name: m["Log_name"], Size: size})
	}
	return out, nil
}

// BinaryLogDir is the directory of the server's binary log files.
func (i *Instance) BinaryLogDir(ctx context.Context) (string, error) {
	var base string
	if err := i.db.QueryRowContext(ctx, binlogBasename).Scan(&base); err != nil {
		return "", fmt.Errorf("read log_bin_basename on %s: %w", i.addr, err)
	}
	return filepath.Dir(base), nil
}

// RotateBinaryLog closes the binary log file being written, so that every
// transaction committed so far is in a closed file.
func (i *Instance) RotateBinaryLog(ctx context.Context) error {
	return i.exec(ctx, "rotate the binary log", stmts(rotateBinaryLog))
}
