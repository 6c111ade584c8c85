package throughput

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/controller/children"
	"github.com/example/mysql-operator/internal/cluster"
)

// cgroupName is the top of the cgroups the bare server is moved into, in
// each hierarchy.
const cgroupName = "mysql-operator-throughput"

// cgroupLevel is one cgroup of a chain, under its parent: its CPU weight
// as cgroup v1's shares (0: the default) and its memory limit (0: none).
type cgroupLevel struct {
	name   string
	shares int64
	memory int64
}

// kubeletChain is the chain the kubelet makes for the server's container
// of a 1-instance MySQL of spec, the only pod of its node, by the
// kubelet's rules: kubepods weighs the node's CPUs; a Burstable pod's
// QoS cgroup and the pod's weigh its CPU requests, the container's its
// own (at least 2 shares); the pod's memory limit is its containers', the
// container's its own. The containers are the builder's.
func kubeletChain(spec databasev1.MySQLSpec) []cgroupLevel {
	m := &databasev1.MySQL{Spec: spec}
	var podMilli, podMemory, serverMilli, serverMemory int64
	for _, c := range children.StatefulSet(m, children.Agent{}).Spec.Template.Spec.Containers {
		var req, lim corev1.ResourceList
		if c.Resources != nil && c.Resources.Requests != nil {
			req = *c.Resources.Requests
		}
		if c.Resources != nil && c.Resources.Limits != nil {
			lim = *c.Resources.Limits
		}
		podMilli += req.Cpu().MilliValue()
		podMemory += lim.Memory().Value()
		if *c.Name == children.ServerContainerName {
			serverMilli, serverMemory = req.Cpu().MilliValue(), lim.Memory().Value()
		}
	}
	return []cgroupLevel{
		{name: cgroupName, shares: cluster.NodeCPUShares()},
		{name: "burstable", shares: milliToShares(podMilli)},
		{name: "pod", shares: milliToShares(podMilli), memory: podMemory},
		{name: "server", shares: milliToShares(serverMilli), memory: serverMemory},
	}
}

// milliToShares is the kubelet's cgroup v1 CPU weight for a CPU request.
func milliToShares(milli int64) int64 { return max(2, milli*1024/1000) }

// Controllers a bare server's cgroups take part in: all the kubelet's, or
// all but CPU (time and weight).
var (
	allControllers   = []string{"cpu", "cpuacct", "memory", "pids", "blkio"}
	noCPUControllers = []string{"memory", "pids", "blkio"}
)

// v2Controllers are cgroup v2's names for v1's controllers; cpuacct is
// part of v2's cpu.
var v2Controllers = map[string]string{"cpu": "cpu", "memory": "memory", "pids": "pids", "blkio": "io"}

// cgroupV2 says whether this machine has cgroup v2's one tree rather
// than v1's hierarchies.
func cgroupV2() bool {
	_, err := os.Stat("/sys/fs/cgroup/cgroup.controllers")
	return err == nil
}

// podCgroup is a chain of cgroups made for the bare server, in every
// hierarchy, deepest last.
type podCgroup struct{ dirs []string }

// joinPodCgroup makes the chain in v1's hierarchies of controllers (or,
// with v2, under controllers handed down its one tree; there a controller
// the system already hands down from the root stays on) and moves pid
// into its last cgroup.
func joinPodCgroup(pid int, chain []cgroupLevel, controllers []string) (*podCgroup, error) {
	g := &podCgroup{}
	if cgroupV2() {
		var enable []string
		for _, c := range controllers {
			if v2, ok := v2Controllers[c]; ok {
				enable = append(enable, "+"+v2)
			}
		}
		return g, g.join("/sys/fs/cgroup", "", strings.Join(enable, " "), chain, pid)
	}
	for _, c := range controllers {
		if err := g.join(filepath.Join("/sys/fs/cgroup", c), c, "", chain, pid); err != nil {
			g.remove()
			return nil, err
		}
	}
	return g, nil
}

// join makes the chain under the hierarchy root of v1's controller c
// (empty: v2, each parent handing down enable), writes its weights and
// limits, and moves pid into its last cgroup.
func (g *podCgroup) join(root, c, enable string, chain []cgroupLevel, pid int) error {
	dir := root
	for _, l := range chain {
		if c == "" {
			_ = os.WriteFile(filepath.Join(dir, "cgroup.subtree_control"), []byte(enable), 0o644)
		}
		dir = filepath.Join(dir, l.name)
		if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
			return fmt.Errorf("make cgroup %s: %w", dir, err)
		}
		g.dirs = append(g.dirs, dir)
		for file, v := range l.files(c) {
			if err := os.WriteFile(filepath.Join(dir, file), []byte(strconv.FormatInt(v, 10)), 0o644); err != nil {
				return fmt.Errorf("set %s of cgroup %s: %w", file, dir, err)
			}
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0o644); err != nil {
		return fmt.Errorf("move the bare server into cgroup %s: %w", dir, err)
	}
	return nil
}

// files are the level's settings in v1's controller c (empty: v2): the
// kubelet's weight and limit files.
func (l cgroupLevel) files(c string) map[string]int64 {
	out := map[string]int64{}
	set := func(file string, v int64) {
		if v > 0 {
			out[file] = v
		}
	}
	switch c {
	case "cpu":
		set("cpu.shares", l.shares)
	case "memory":
		set("memory.limit_in_bytes", l.memory)
	case "":
		if l.shares > 0 {
			set("cpu.weight", cluster.CPUWeight(l.shares))
		}
		set("memory.max", l.memory)
	}
	return out
}

// remove removes the chain, deepest first, whose process has ended.
func (g *podCgroup) remove() {
	for i := len(g.dirs) - 1; i >= 0; i-- {
		_ = os.Remove(g.dirs[i])
	}
}

// leaveCgroups moves pid back into the root cgroup of v1's controllers,
// or of v2's tree, so that the chain it was in can be removed.
func leaveCgroups(pid int, controllers []string) error {
	roots := []string{"/sys/fs/cgroup"}
	if !cgroupV2() {
		roots = roots[:0]
		for _, c := range controllers {
			roots = append(roots, filepath.Join("/sys/fs/cgroup", c))
		}
	}
	for _, r := range roots {
		if err := os.WriteFile(filepath.Join(r, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0o644); err != nil {
			return fmt.Errorf("move %d back into cgroup %s: %w", pid, r, err)
		}
	}
	return nil
}
