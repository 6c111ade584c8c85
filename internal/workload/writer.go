// Package workload is the client the data-plane tests and the soak run
// against a MySQL: a writer of numbered rows that records which the
// server acknowledged and when, so that a disruption's write pause and any
// acknowledged row lost can be counted afterwards.
package workload

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"
)

// StatementTimeout bounds each INSERT, as a client's own timeout would.
const StatementTimeout = 3 * time.Second

// Writer inserts numbered rows into shop.log through one database handle
// (a Service's address), one at a time, as fast as it can, and records
// which were acknowledged and when each attempt started and ended.
type Writer struct {
	mu       sync.Mutex
	acked    []int
	attempts []Attempt
	stop     chan struct{}
	done     chan struct{}
}

// Attempt is one INSERT: when it started and ended, and its error, nil
// when the server acknowledged it.
type Attempt struct {
	Start, End time.Time
	Err        error
}

// StartWriter creates shop.log through db and starts writing rows.
func StartWriter(db *sql.DB) (*Writer, error) {
	for _, q := range []string{"CREATE DATABASE IF NOT EXISTS shop", "CREATE TABLE IF NOT EXISTS shop.log (n INT PRIMARY KEY)"} {
		if _, err := db.Exec(q); err != nil {
			return nil, fmt.Errorf("%s: %w", q, err)
		}
	}
	w := &Writer{stop: make(chan struct{}), done: make(chan struct{})}
	go w.run(db)
	return w, nil
}

// run writes until Stop.
func (w *Writer) run(db *sql.DB) {
	defer close(w.done)
	for n := 1; ; {
		select {
		case <-w.stop:
			return
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), StatementTimeout)
		a := Attempt{Start: time.Now()}
		_, a.Err = db.ExecContext(ctx, "INSERT INTO shop.log VALUES (?)", n)
		cancel()
		a.End = time.Now()
		w.mu.Lock()
		w.attempts = append(w.attempts, a)
		switch {
		case a.Err == nil:
			w.acked = append(w.acked, n)
			n++
		case isDuplicate(a.Err):
			// An earlier try of n was committed but its acknowledgement
			// was lost with the connection: n is there, not acknowledged;
			// go on with the next.
			n++
		}
		w.mu.Unlock()
		if a.Err != nil {
			time.Sleep(50 * time.Millisecond) // refused: a breath before the next try
		}
	}
}

// errDuplicate is ER_DUP_ENTRY: the row is already there.
const errDuplicate = 1062

// isDuplicate says whether err is a duplicate-key refusal.
func isDuplicate(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && me.Number == errDuplicate
}

// Count returns how many writes were acknowledged so far.
func (w *Writer) Count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.acked)
}

// Recovered says whether a write that started after since was
// acknowledged, and when the first such ended.
func (w *Writer) Recovered(since time.Time) (time.Time, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, a := range w.attempts {
		if a.Err == nil && a.Start.After(since) {
			return a.End, true
		}
	}
	return time.Time{}, false
}

// Attempts returns the attempts that ended after from and started before
// to.
func (w *Writer) Attempts(from, to time.Time) []Attempt {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []Attempt
	for _, a := range w.attempts {
		if !a.End.Before(from) && !a.Start.After(to) {
			out = append(out, a)
		}
	}
	return out
}

// Outage is the longest time between the ends of two acknowledged writes,
// the later of which ended between from and to (zero times for all), or
// between the last acknowledged write and to when none ended after it (a
// gap still open at the window's end counts up to to), the number of
// refused attempts that ended between them and the last refusal.
func (w *Writer) Outage(from, to time.Time) (time.Duration, int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	in := func(t time.Time) bool { return (from.IsZero() || !t.Before(from)) && (to.IsZero() || !t.After(to)) }
	var longest time.Duration
	var last time.Time
	refused := 0
	var lastErr error
	for _, a := range w.attempts {
		if a.Err != nil {
			if in(a.End) {
				refused, lastErr = refused+1, a.Err
			}
			continue
		}
		if !to.IsZero() && a.End.After(to) {
			break
		}
		if !last.IsZero() && in(a.End) {
			longest = max(longest, a.End.Sub(last))
		}
		last = a.End
	}
	if !to.IsZero() && !last.IsZero() {
		longest = max(longest, to.Sub(last))
	}
	return longest, refused, lastErr
}

// Stop stops the writer and waits for its last attempt.
func (w *Writer) Stop() {
	close(w.stop)
	<-w.done
}

// Lost reads shop.log through db and returns the acknowledged rows that
// are not there, and how many were acknowledged. Stop the writer first.
func (w *Writer) Lost(db *sql.DB) (lost []int, acked int, err error) {
	rows, err := db.Query("SELECT n FROM shop.log")
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	have := map[int]bool{}
	for rows.Next() {
		var n int
		if err := rows.Scan(&n); err != nil {
			return nil, 0, err
		}
		have[n] = true
	}
	if err := rows.Err(); err != nil {
		return nil, 0, err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, n := range w.acked {
		if !have[n] {
			lost = append(lost, n)
		}
	}
	return lost, len(w.acked), nil
}
