// Command throughput measures the database's throughput through the
// operator against the bare server (package throughput): sysbench's
// oltp_read_write on MariaDB 10.11 started bare with the operator's my.cnf,
// then on a 1-instance and a 3-instance MySQL of the local cluster's real
// node; it writes the report into docs/throughput.md between the markers.
// It needs root, `make node prometheus s3 control-plane` and sysbench
// (`make deps`); it takes about 15 minutes with the default 60 s runs.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"go.uber.org/zap/zapcore"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/example/mysql-operator/internal/throughput"
)

// The report goes between these lines of the output file.
const (
	begin = "<!-- throughput: begin -->"
	end   = "<!-- throughput: end -->"
)

func main() {
	var load throughput.Load
	def := throughput.DefaultLoad()
	flag.IntVar(&load.Tables, "tables", def.Tables, "sysbench --tables")
	flag.IntVar(&load.TableSize, "table-size", def.TableSize, "sysbench --table-size")
	flag.IntVar(&load.Threads, "threads", def.Threads, "sysbench --threads")
	flag.DurationVar(&load.Duration, "time", def.Duration, "how long each run lasts")
	out := flag.String("out", "docs/throughput.md", "the file whose report section to rewrite; empty prints it")
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.Level(zapcore.ErrorLevel)))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, load, *out); err != nil {
		fmt.Fprintln(os.Stderr, "FAILED:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, load throughput.Load, out string) error {
	dir, err := os.MkdirTemp("", "mysql-operator-throughput-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	variants, err := throughput.Run(ctx, throughput.Options{Load: load, Dir: dir, Progress: os.Stdout})
	if err != nil {
		return err
	}
	var report bytes.Buffer
	if err := throughput.Report(&report, load, time.Now(), variants); err != nil {
		return err
	}
	fmt.Print("\n" + report.String())
	if out == "" {
		return nil
	}
	doc, err := os.ReadFile(out)
	if err != nil {
		return err
	}
	i, j := strings.Index(string(doc), begin), strings.Index(string(doc), end)
	if i < 0 || j < i {
		return fmt.Errorf("%s has no %s ... %s section", out, begin, end)
	}
	updated := string(doc[:i+len(begin)]) + "\n" + report.String() + string(doc[j:])
	return os.WriteFile(out, []byte(updated), 0o644)
}
