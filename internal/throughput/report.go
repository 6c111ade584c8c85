package throughput

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// Report writes the variants as Markdown: TPS, the 95th percentile and
// their ratios to the first (the bare server), then each process's CPU
// time, and the operator's own (manager and agents) per 1,000
// transactions.
func Report(w io.Writer, load Load, when time.Time, variants []Variant) error {
	if len(variants) == 0 {
		return fmt.Errorf("nothing measured")
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Measured %s with `go run ./cmd/throughput` (sysbench oltp_read_write, %d tables of %d rows, %d threads, %s per run).\n\n",
		when.UTC().Format("2006-01-02 15:04 MST"), load.Tables, load.TableSize, load.Threads, load.Duration)
	bare := variants[0].Result
	b.WriteString("| setup | TPS | 95th percentile | TPS / bare | p95 / bare |\n|---|---|---|---|---|\n")
	for _, v := range variants {
		r := v.Result
		fmt.Fprintf(&b, "| %s | %.0f | %.1f ms | %.2f | %.2f |\n", v.Name, r.TPS, ms(r.P95), r.TPS/bare.TPS, ms(r.P95)/ms(bare.P95))
	}
	b.WriteString("\nCPU seconds per process over each run, and the operator's (manager and agents) per 1,000 transactions:\n\n")
	names := cpuNames(variants)
	b.WriteString("| setup | " + strings.Join(names, " | ") + " | operator per 1,000 tx |\n|---|" + strings.Repeat("---|", len(names)+1) + "\n")
	for _, v := range variants {
		fmt.Fprintf(&b, "| %s |", v.Name)
		for _, n := range names {
			fmt.Fprintf(&b, " %.1f |", v.CPU[n].Seconds())
		}
		operator := v.CPU["manager"] + v.CPU["agent"]
		fmt.Fprintf(&b, " %.1f ms |\n", ms(operator)*1000/float64(max(v.Result.Transactions, 1)))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// cpuNames are the processes that used CPU in some variant, the busiest first.
func cpuNames(variants []Variant) []string {
	total := map[string]time.Duration{}
	for _, v := range variants {
		for n, d := range v.CPU {
			total[n] += d
		}
	}
	var names []string
	for n, d := range total {
		if d > 0 {
			names = append(names, n)
		}
	}
	sort.Slice(names, func(i, j int) bool { return total[names[i]] > total[names[j]] })
	return names
}

// ms is d in milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
