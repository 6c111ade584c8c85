package cluster

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
)

// stateDir holds a record per cluster with a real node, so that a cluster
// whose process died without stopping it (a killed test binary) is torn
// down by the next one.
const stateDir = "/run/mysql-operator-local"

// nodeRecord is what teardown needs to know of a cluster with a real node.
type nodeRecord struct {
	// PID is the process that runs the cluster.
	PID int `json:"pid"`
	// Dir is the cluster's directory.
	Dir string `json:"dir"`
	// Netns and HostLink are the node's network namespace and veth.
	Netns    string `json:"netns"`
	HostLink string `json:"hostLink"`
	// CgroupRoot is the kubelet's cgroup root, the same in every hierarchy.
	CgroupRoot string `json:"cgroupRoot"`
}

// path is the record's file.
func (r nodeRecord) path() string { return filepath.Join(stateDir, r.Netns+".json") }

// save writes the record.
func (r nodeRecord) save() error {
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		return err
	}
	data, _ := json.Marshal(r) // a record always marshals
	return os.WriteFile(r.path(), data, 0o600)
}

// teardown undoes everything of a real node once its own processes are
// stopped: it kills what still runs in the pods' cgroups and the container
// shims, unmounts everything under the cluster's directory, removes the
// pods' cgroups and deletes the network namespace and veth. It is safe to
// run twice and on a node half made.
func (r nodeRecord) teardown() error {
	var errs []error
	killCgroup(r.CgroupRoot)
	killMatching(filepath.Join(r.Dir, "node", "containerd"))
	errs = append(errs, unmountUnder(r.Dir))
	errs = append(errs, removeCgroup(r.CgroupRoot))
	(&nodeNet{Netns: r.Netns, hostLink: r.HostLink}).delete()
	_ = os.RemoveAll(filepath.Join(r.Dir, "node", "volumes"))
	_ = os.Remove(r.path())
	return errors.Join(errs...)
}

// reapStale tears down the real nodes of clusters whose process is gone.
func reapStale() {
	files, _ := filepath.Glob(filepath.Join(stateDir, "*.json"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		var r nodeRecord
		if err != nil || json.Unmarshal(data, &r) != nil {
			continue
		}
		if syscall.Kill(r.PID, 0) == nil {
			continue // its cluster still runs
		}
		_ = r.teardown()
	}
}

// cgroupHierarchies are the cgroup v1 hierarchies mounted under
// /sys/fs/cgroup, and the v2 one if any.
func cgroupHierarchies() []string {
	dirs, _ := filepath.Glob("/sys/fs/cgroup/*")
	var out []string
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "cgroup.procs")); err == nil {
			out = append(out, d)
		}
	}
	if _, err := os.Stat("/sys/fs/cgroup/cgroup.procs"); err == nil {
		out = append(out, "/sys/fs/cgroup")
	}
	return out
}

// makeCgroup makes the cgroup root of the kubelet in every hierarchy; a
// new cpuset cgroup gets its parent's CPUs and memory nodes, without which
// no process may join it. The root weighs what the kubelet gives its
// kubepods cgroup (see nodeCPUWeight).
func makeCgroup(root string) error {
	for _, h := range cgroupHierarchies() {
		dir := filepath.Join(h, root)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		if err := nodeCPUWeight(dir); err != nil {
			return err
		}
		for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
			if v, err := os.ReadFile(filepath.Join(h, f)); err == nil {
				if err := os.WriteFile(filepath.Join(dir, f), v, 0o644); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// nodeCPUWeight gives the cgroup root dir the CPU weight of the node's
// allocatable CPUs, as the kubelet gives its kubepods cgroup: on a real
// node kubepods sits at the top of the hierarchy beside the system's
// processes, here under this root, which would otherwise weigh as much as
// one process (cgroup v1's cpu.shares, or v2's cpu.weight).
func nodeCPUWeight(dir string) error {
	shares := NodeCPUShares()
	if _, err := os.Stat(filepath.Join(dir, "cpu.shares")); err == nil {
		return os.WriteFile(filepath.Join(dir, "cpu.shares"), []byte(strconv.FormatInt(shares, 10)), 0o644)
	}
	if _, err := os.Stat(filepath.Join(dir, "cpu.weight")); err == nil {
		return os.WriteFile(filepath.Join(dir, "cpu.weight"), []byte(strconv.FormatInt(CPUWeight(shares), 10)), 0o644)
	}
	return nil
}

// NodeCPUShares is the cgroup v1 CPU weight the kubelet gives its
// kubepods cgroup on this machine: its CPUs, at 1024 shares each.
func NodeCPUShares() int64 { return int64(runtime.NumCPU()) * 1024 }

// CPUWeight is cgroup v2's cpu.weight for cgroup v1's cpu.shares, by the
// kubelet's conversion.
func CPUWeight(shares int64) int64 { return 1 + (shares-2)*9999/262142 }

// killCgroup kills every process in root's subtree, in every hierarchy.
func killCgroup(root string) {
	if root == "" {
		return
	}
	for _, h := range cgroupHierarchies() {
		_ = filepath.WalkDir(filepath.Join(h, root), func(path string, d os.DirEntry, err error) error {
			if err != nil || !d.IsDir() {
				return nil
			}
			data, _ := os.ReadFile(filepath.Join(path, "cgroup.procs"))
			for _, f := range strings.Fields(string(data)) {
				if pid, err := strconv.Atoi(f); err == nil {
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
			}
			return nil
		})
	}
}

// removeCgroup removes root's subtree, deepest first, in every hierarchy.
func removeCgroup(root string) error {
	if root == "" {
		return nil
	}
	var errs []error
	for _, h := range cgroupHierarchies() {
		var dirs []string
		_ = filepath.WalkDir(filepath.Join(h, root), func(path string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, path)
			}
			return nil
		})
		for i := len(dirs) - 1; i >= 0; i-- {
			if err := syscall.Rmdir(dirs[i]); err != nil && !errors.Is(err, syscall.ENOENT) {
				errs = append(errs, &os.PathError{Op: "rmdir", Path: dirs[i], Err: err})
			}
		}
	}
	return errors.Join(errs...)
}

// killMatching kills every process whose command line mentions s: the
// container shims, which leave containerd's process group on purpose.
func killMatching(s string) {
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		data, err := os.ReadFile(p)
		if err != nil || !strings.Contains(string(data), s) {
			continue
		}
		if pid, err := strconv.Atoi(filepath.Base(filepath.Dir(p))); err == nil && pid != os.Getpid() {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// unmountUnder lazily unmounts every mount point under dir, deepest first.
func unmountUnder(dir string) error {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return err
	}
	defer f.Close()
	var points []string
	s := bufio.NewScanner(f)
	for s.Scan() {
		fields := strings.Fields(s.Text())
		if len(fields) > 4 && (fields[4] == dir || strings.HasPrefix(fields[4], dir+"/")) {
			points = append(points, fields[4])
		}
	}
	sort.Sort(sort.Reverse(sort.StringSlice(points)))
	var errs []error
	for _, p := range points {
		if err := syscall.Unmount(p, syscall.MNT_DETACH); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOENT) {
			errs = append(errs, &os.PathError{Op: "umount", Path: p, Err: err})
		}
	}
	return errors.Join(errs...)
}
