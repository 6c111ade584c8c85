package throughput

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// cgroupName is the cgroup the bare server is moved into, in each
// hierarchy.
const cgroupName = "mysql-operator-throughput"

// v1Controllers are the cgroup v1 hierarchies the kubelet puts a pod's
// container in and that account or limit a server: CPU time and weight,
// memory (with the container's limit), processes and block I/O.
var v1Controllers = []string{"cpu", "cpuacct", "memory", "pids", "blkio"}

// podCgroup is a cgroup made for the bare server as the kubelet makes one
// for a pod's container, without the pod: its memory limit, and the
// controllers that account for it. It shows what a container's cgroup
// costs a server by itself, with no network namespace, seccomp profile or
// other process of a pod.
type podCgroup struct{ dirs []string }

// joinPodCgroup makes the cgroup with memory limit limit and moves pid
// into it: cgroup v1's hierarchies, or v2's one tree.
func joinPodCgroup(pid int, limit int64) (*podCgroup, error) {
	g := &podCgroup{}
	if _, err := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err == nil {
		// v2: the root hands its controllers down first.
		_ = os.WriteFile("/sys/fs/cgroup/cgroup.subtree_control", []byte("+cpu +memory +pids +io"), 0o644)
		dir := filepath.Join("/sys/fs/cgroup", cgroupName)
		return g, g.join(dir, pid, "memory.max", limit)
	}
	for _, c := range v1Controllers {
		limitFile := ""
		if c == "memory" {
			limitFile = "memory.limit_in_bytes"
		}
		if err := g.join(filepath.Join("/sys/fs/cgroup", c, cgroupName), pid, limitFile, limit); err != nil {
			g.remove()
			return nil, err
		}
	}
	return g, nil
}

// join makes dir, writes limit into its file limitFile if any, and moves
// pid into it.
func (g *podCgroup) join(dir string, pid int, limitFile string, limit int64) error {
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("make cgroup %s: %w", dir, err)
	}
	g.dirs = append(g.dirs, dir)
	if limitFile != "" {
		if err := os.WriteFile(filepath.Join(dir, limitFile), []byte(strconv.FormatInt(limit, 10)), 0o644); err != nil {
			return fmt.Errorf("limit cgroup %s: %w", dir, err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0o644); err != nil {
		return fmt.Errorf("move the bare server into cgroup %s: %w", dir, err)
	}
	return nil
}

// remove removes the cgroup, whose process has ended.
func (g *podCgroup) remove() {
	for _, d := range g.dirs {
		_ = os.Remove(d)
	}
}
