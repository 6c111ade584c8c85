package dbtest

import (
	"database/sql"
	"fmt"
)

// ReplicaStatus reads SHOW REPLICA STATUS through db, column to value;
// nil when the server is no replica.
func ReplicaStatus(db *sql.DB) (map[string]string, error) {
	rows, err := db.Query("SHOW REPLICA STATUS")
	if err != nil {
		return nil, fmt.Errorf("SHOW REPLICA STATUS: %w", err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil || !rows.Next() {
		return nil, err
	}
	vals := make([]sql.NullString, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := rows.Scan(ptrs...); err != nil {
		return nil, fmt.Errorf("SHOW REPLICA STATUS: %w", err)
	}
	out := make(map[string]string, len(cols))
	for i, c := range cols {
		out[c] = vals[i].String
	}
	return out, nil
}
