// Command bench measures the operator on a full local cluster for several N
// (`make bench`): converge time against the floor, API writes when idle and
// per change, memory and reconcile latency. It prints a table and writes
// docs/benchmarks.md and docs/benchmarks.png.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap/zapcore"
	"k8s.io/apimachinery/pkg/api/resource"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/example/mysql-operator/internal/bench"
)

func main() {
	ns := flag.String("n", "10,100,500", "Comma-separated numbers of MySQL objects.")
	window := flag.Duration("window", 60*time.Second, "Length of the idle window.")
	out := flag.String("out", "docs", "Directory of benchmarks.md and benchmarks.png; empty writes no report.")
	limit := flag.String("memory-limit", "", "Memory limit of the container the manager runs as if in (a quantity, 128Mi); its GOMEMLIMIT is 90% of it. Empty: none.")
	profile := flag.String("profile", "", "Directory to write the manager's Go profiles to, per N: a CPU profile of the first minute of the converge, "+
		"the allocations of the converge, those of 15 s of the idle manager after its window, those of its whole life by then, and its live heap. Empty: none.")
	managerBin := flag.String("manager", "", "Manager binary to measure, to compare builds (one of another commit, say); empty builds ./cmd/manager.")
	flag.Parse()
	var memoryLimit int64
	if *limit != "" {
		q, err := resource.ParseQuantity(*limit)
		if err != nil {
			fmt.Fprintf(os.Stderr, "bad -memory-limit %q: %v\n", *limit, err)
			os.Exit(2)
		}
		memoryLimit = q.Value()
	}
	// The clients log only their errors; progress goes to the terminal.
	ctrl.SetLogger(zap.New(zap.Level(zapcore.ErrorLevel)))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var results []bench.Result
	for _, s := range strings.Split(*ns, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			fmt.Fprintf(os.Stderr, "bad -n value %q\n", s)
			os.Exit(2)
		}
		r, err := bench.Run(ctx, n, bench.Options{Window: *window, Progress: os.Stderr, MemoryLimit: memoryLimit, ProfileDir: *profile, ManagerBin: *managerBin})
		if err != nil {
			fmt.Fprintf(os.Stderr, "N=%d: %v\n", n, err)
			os.Exit(1)
		}
		results = append(results, r)
	}
	bench.Table(os.Stdout, results)
	if *out != "" {
		cmd := "go run ./cmd/bench " + strings.Join(os.Args[1:], " ")
		if err := bench.WriteReport(*out, strings.TrimSpace(cmd), *window, results); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Fprintf(os.Stderr, "wrote %s/benchmarks.md and %s/benchmarks.png\n", *out, *out)
	}
}
