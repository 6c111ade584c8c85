package throughput

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"
)

// BenchmarkCgroups moves one running bare server (no io_uring, as in a
// pod) between the root cgroup and the kubelet's chain for the server's
// container in some of its controllers, and runs sysbench in each: which
// controller of a container's cgroups costs throughput, without a restart
// between setups. The root cgroup is measured first and last, to show the
// drift. Root, sysbench and MariaDB needed (`make deps`); about 4 minutes:
//
//	go test ./internal/throughput -run '^$' -bench Cgroups -benchtime 1x
//
// The workload is DefaultLoad's; THROUGHPUT_BENCH_SECONDS sets each run's
// length (45 by default). TPS per setup is the metric "tps".
func BenchmarkCgroups(b *testing.B) {
	if os.Geteuid() != 0 {
		b.Skip("moves a server between cgroups: run as root")
	}
	ctx := context.Background()
	spec := Spec(1)
	server, err := startBare(ctx, spec, b.TempDir(), true)
	if err != nil {
		b.Fatal(err)
	}
	defer server.stop()
	load := DefaultLoad()
	load.Duration = benchRunLength(b)
	if err := load.prepare(ctx, server.target); err != nil {
		b.Fatal(err)
	}
	for _, s := range []struct {
		name        string
		controllers []string
	}{
		{"root", nil},
		{"chain-all", allControllers},
		{"chain-cpu-cpuacct", []string{"cpu", "cpuacct"}},
		{"chain-memory-pids-blkio", noCPUControllers},
		{"root-again", nil},
	} {
		b.Run(s.name, func(b *testing.B) {
			if s.controllers != nil {
				g, err := joinPodCgroup(server.cmd.Process.Pid, kubeletChain(spec), s.controllers)
				if err != nil {
					b.Fatal(err)
				}
				defer func() {
					if err := leaveCgroups(server.cmd.Process.Pid, s.controllers); err != nil {
						b.Error(err)
					}
					g.remove()
				}()
			}
			r, err := load.run(ctx, server.target)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(r.TPS, "tps")
			b.ReportMetric(float64(r.P95.Microseconds())/1000, "p95-ms")
		})
	}
}

// benchRunLength is THROUGHPUT_BENCH_SECONDS, else 45 s.
func benchRunLength(b *testing.B) time.Duration {
	v := os.Getenv("THROUGHPUT_BENCH_SECONDS")
	if v == "" {
		return 45 * time.Second
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		b.Fatalf("THROUGHPUT_BENCH_SECONDS=%q: want a positive number of seconds", v)
	}
	return time.Duration(n) * time.Second
}
