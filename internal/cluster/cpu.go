package cluster

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// userHZ is the unit of the CPU times of /proc/<pid>/stat: the kernel
// reports them in USER_HZ, 100 per second on Linux whatever its own tick.
const userHZ = 100

// CPU is the CPU time, user and system, that processes used, by name.
type CPU map[string]time.Duration

// CPU returns the CPU time each running component of the cluster, each
// running manager process and this process ("bench", as the benchmark
// calls it: its clients and watches) has used since it started.
func (c *Cluster) CPU() CPU {
	cpu := CPU{}
	for name, p := range c.procs {
		if d, err := processCPU(strconv.Itoa(p.cmd.Process.Pid)); err == nil {
			cpu[name] = d
		}
	}
	for _, m := range c.managers {
		if d, err := processCPU(strconv.Itoa(m.process().cmd.Process.Pid)); err == nil {
			cpu[m.Name] += d
		}
	}
	if d, err := processCPU("self"); err == nil {
		cpu["bench"] = d
	}
	return cpu
}

// Since returns the CPU time each process used from before to c. A
// process that restarted in between counts from its start.
func (c CPU) Since(before CPU) CPU {
	d := CPU{}
	for name, t := range c {
		if b := before[name]; b <= t {
			t -= b
		}
		d[name] = t
	}
	return d
}

// String lists the processes by CPU time, the busiest first, and the sum:
// "kube-apiserver 612s, etcd 98s: 710s".
func (c CPU) String() string {
	names := make([]string, 0, len(c))
	var sum time.Duration
	for name, t := range c {
		names = append(names, name)
		sum += t
	}
	sort.Slice(names, func(i, j int) bool {
		if c[names[i]] != c[names[j]] {
			return c[names[i]] > c[names[j]]
		}
		return names[i] < names[j]
	})
	parts := make([]string, len(names))
	for i, name := range names {
		parts[i] = fmt.Sprintf("%s %.0fs", name, c[name].Seconds())
	}
	return fmt.Sprintf("%s: %.0fs", strings.Join(parts, ", "), sum.Seconds())
}

// processCPU reads the user and system time of the process pid ("self"
// for this one) from /proc.
func processCPU(pid string) (time.Duration, error) {
	f, err := statFields(pid)
	if err != nil {
		return 0, err
	}
	// utime and stime are fields 14 and 15.
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%s/stat: %d fields", pid, len(f)+2)
	}
	var ticks uint64
	for _, s := range f[11:13] {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/%s/stat: %w", pid, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / userHZ, nil
}

// ProcessesCPU returns the CPU time used so far by every process of this
// machine whose command name (/proc/<pid>/comm) is one of names, summed
// by name: the servers and agents in the real node's pods as well as the
// components on the host.
func ProcessesCPU(names ...string) CPU {
	cpu := CPU{}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return cpu
	}
	for _, e := range entries {
		pid := e.Name()
		if pid[0] < '0' || pid[0] > '9' {
			continue
		}
		comm, err := os.ReadFile("/proc/" + pid + "/comm")
		if err != nil {
			continue
		}
		name := strings.TrimSpace(string(comm))
		if !slices.Contains(names, name) {
			continue
		}
		if d, err := processCPU(pid); err == nil {
			cpu[name] += d
		}
	}
	return cpu
}

// statFields reads /proc/pid/stat and returns its fields from the state
// (field 3) on: the command name before them, in parentheses, may hold
// spaces, so the fields counted by proc(5) resume after its closing
// parenthesis.
func statFields(pid string) ([]string, error) {
	data, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return nil, err
	}
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return nil, fmt.Errorf("/proc/%s/stat: no command name", pid)
	}
	return strings.Fields(string(data[i+1:])), nil
}
