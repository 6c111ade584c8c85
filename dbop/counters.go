package dbop

import (
	"context"
	"fmt"
	"strconv"
)

// Counters are a server's activity and memory, as its metrics show them.
type Counters struct {
	// Uptime is how many seconds the server has run.
	Uptime uint64
	// Questions counts the statements clients sent.
	Questions uint64
	// ThreadsConnected is the connections open now.
	ThreadsConnected uint64
	// BufferPoolPages is the InnoDB buffer pool's size in pages, and
	// BufferPoolFree and BufferPoolData those free and holding data.
	BufferPoolPages, BufferPoolFree, BufferPoolData uint64
	// PageSize is InnoDB's page size in bytes.
	PageSize uint64
}

// countersQuery reads Counters in one round trip; both dialects name the
// variables alike, and reading them needs no privilege.
const countersQuery = "SHOW GLOBAL STATUS WHERE Variable_name IN ('Uptime', 'Questions', 'Threads_connected', " +
	"'Innodb_buffer_pool_pages_total', 'Innodb_buffer_pool_pages_free', 'Innodb_buffer_pool_pages_data', 'Innodb_page_size')"

// Counters reads the server's counters.
func (i *Instance) Counters(ctx context.Context) (Counters, error) {
	var c Counters
	rows, err := i.db.QueryContext(ctx, countersQuery)
	if err != nil {
		return c, fmt.Errorf("read the counters of %s: %w", i.addr, err)
	}
	defer rows.Close()
	fields := map[string]*uint64{"Uptime": &c.Uptime, "Questions": &c.Questions, "Threads_connected": &c.ThreadsConnected,
		"Innodb_buffer_pool_pages_total": &c.BufferPoolPages, "Innodb_buffer_pool_pages_free": &c.BufferPoolFree,
		"Innodb_buffer_pool_pages_data": &c.BufferPoolData, "Innodb_page_size": &c.PageSize}
	for rows.Next() {
		var name, value string
		if err := rows.Scan(&name, &value); err != nil {
			return c, fmt.Errorf("read the counters of %s: %w", i.addr, err)
		}
		if p, ok := fields[name]; ok {
			*p, _ = strconv.ParseUint(value, 10, 64) // a value that is not a number reads 0
		}
	}
	if err := rows.Err(); err != nil {
		return c, fmt.Errorf("read the counters of %s: %w", i.addr, err)
	}
	return c, nil
}
