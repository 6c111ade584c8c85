// Package throughput measures the database's own throughput through the
// operator against the bare server: sysbench's oltp_read_write on the
// same MariaDB 10.11, started bare on loopback with the operator's my.cnf
// (rendered by the builder), then as a 1-instance and a 3-instance MySQL
// of the local cluster's real node, with the CPU time of every process
// that takes part. cmd/throughput runs it and writes docs/throughput.md.
package throughput

import (
	"context"
	"database/sql"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"time"

	"github.com/go-sql-driver/mysql"
	"k8s.io/apimachinery/pkg/util/wait"
)

// Load is the sysbench workload.
type Load struct {
	// Tables and TableSize are the tables sysbench prepares.
	Tables, TableSize int
	// Threads are its client threads.
	Threads int
	// Duration is how long each run lasts.
	Duration time.Duration
}

// DefaultLoad is the workload: 4 tables of 20,000 rows, 8
// threads, 60 s a run.
func DefaultLoad() Load { return Load{Tables: 4, TableSize: 20000, Threads: 8, Duration: time.Minute} }

// Result is what one sysbench run measured.
type Result struct {
	// Transactions is how many transactions completed.
	Transactions int64
	// TPS is transactions per second.
	TPS float64
	// P95 is the 95th percentile of the transactions' latency.
	P95 time.Duration
}

// target is a server sysbench runs against, as root.
type target struct {
	host     string
	port     int
	password string
	// netns, when set, is the network namespace sysbench runs in (a
	// pod's, host then its loopback, or the node's); tables are prepared
	// from this machine through prepareHost.
	netns       string
	prepareHost string
}

// prepare creates the database sbtest and sysbench's tables on t.
func (l Load) prepare(ctx context.Context, t target) error {
	if t.netns != "" {
		t.host, t.netns = t.prepareHost, ""
	}
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr = "root", t.password, "tcp", fmt.Sprintf("%s:%d", t.host, t.port)
	db, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		return err
	}
	defer db.Close()
	// A Service's address is routed a moment after the MySQL is Current.
	// The tables are made anew on a server measured before.
	var last error
	err = wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		if _, last = db.ExecContext(ctx, "DROP DATABASE IF EXISTS sbtest"); last == nil {
			_, last = db.ExecContext(ctx, "CREATE DATABASE sbtest")
		}
		return last == nil, nil
	})
	if err != nil {
		return fmt.Errorf("create the database sbtest on %s: %w (last: %v)", cfg.Addr, err, last)
	}
	out, err := l.command(ctx, t, "prepare", l.Tables).CombinedOutput()
	if err != nil {
		return fmt.Errorf("sysbench prepare: %w\n%s", err, out)
	}
	return nil
}

// run runs the workload on t and reads its result.
func (l Load) run(ctx context.Context, t target) (Result, error) {
	out, err := l.command(ctx, t, "run", l.Threads).CombinedOutput()
	if err != nil {
		return Result{}, fmt.Errorf("sysbench run: %w\n%s", err, out)
	}
	return parse(string(out))
}

// command is sysbench's command for command with threads, in t's network
// namespace if it has one.
func (l Load) command(ctx context.Context, t target, command string, threads int) *exec.Cmd {
	if t.netns != "" {
		return exec.CommandContext(ctx, "nsenter", append([]string{"--net=" + t.netns, "--", "sysbench"}, l.args(t, command, threads)...)...)
	}
	return exec.CommandContext(ctx, "sysbench", l.args(t, command, threads)...)
}

// args are sysbench's arguments for command with threads. The password
// is on the command line (sysbench reads it nowhere else): this runs on a
// throwaway server of a throwaway local cluster only.
func (l Load) args(t target, command string, threads int) []string {
	return []string{"oltp_read_write", "--db-driver=mysql", "--mysql-host=" + t.host, "--mysql-port=" + strconv.Itoa(t.port),
		"--mysql-user=root", "--mysql-password=" + t.password, "--mysql-db=sbtest",
		"--tables=" + strconv.Itoa(l.Tables), "--table-size=" + strconv.Itoa(l.TableSize),
		"--threads=" + strconv.Itoa(threads), "--time=" + strconv.Itoa(int(l.Duration.Seconds())), "--report-interval=0", command}
}

var (
	transactionsRE = regexp.MustCompile(`transactions:\s+(\d+)\s+\(([\d.]+) per sec\.\)`)
	p95RE          = regexp.MustCompile(`95th percentile:\s+([\d.]+)`)
)

// parse reads the transactions, their rate and the 95th percentile of
// the latency from sysbench's report.
func parse(out string) (Result, error) {
	tx, p95 := transactionsRE.FindStringSubmatch(out), p95RE.FindStringSubmatch(out)
	if tx == nil || p95 == nil {
		return Result{}, fmt.Errorf("sysbench's report has no transactions or 95th percentile:\n%s", out)
	}
	var r Result
	r.Transactions, _ = strconv.ParseInt(tx[1], 10, 64)
	r.TPS, _ = strconv.ParseFloat(tx[2], 64)
	ms, _ := strconv.ParseFloat(p95[1], 64)
	r.P95 = time.Duration(ms * float64(time.Millisecond))
	return r, nil
}
