package cluster

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// KillContainer kills with SIGKILL every process of one container of a pod
// on the real node, as an out-of-memory kill or a crash would: the kubelet
// restarts it; the pod stays.
func (c *Cluster) KillContainer(pod *corev1.Pod, container string) error {
	pids, err := c.containerPIDs(pod, container)
	if err != nil {
		return err
	}
	killed := 0
	for _, pid := range pids {
		if syscall.Kill(pid, syscall.SIGKILL) == nil {
			killed++
		}
	}
	if killed == 0 {
		return fmt.Errorf("no process of container %s of pod %s could be killed", container, pod.Name)
	}
	return nil
}

// containerPIDs returns the processes of one container of a pod on the
// real node, read from the container's cgroup.
func (c *Cluster) containerPIDs(pod *corev1.Pod, container string) ([]int, error) {
	if c.record == nil {
		return nil, fmt.Errorf("the cluster has no real node")
	}
	var id string
	for _, s := range pod.Status.ContainerStatuses {
		if s.Name == container {
			id = strings.TrimPrefix(s.ContainerID, "containerd://")
		}
	}
	if id == "" {
		return nil, fmt.Errorf("pod %s has no running container %s", pod.Name, container)
	}
	var pids []int
	root := filepath.Join("/sys/fs/cgroup/pids", c.record.CgroupRoot)
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() || filepath.Base(path) != id {
			return nil
		}
		data, _ := os.ReadFile(filepath.Join(path, "cgroup.procs"))
		for _, f := range strings.Fields(string(data)) {
			if pid, err := strconv.Atoi(f); err == nil {
				pids = append(pids, pid)
			}
		}
		return filepath.SkipDir
	})
	if err == nil && len(pids) == 0 {
		err = fmt.Errorf("no process of container %s (%s) found under %s", container, id, root)
	}
	return pids, err
}

// NetworkNamespace is the path of the network namespace of pod, through
// a process of its container: a command run in it (nsenter --net=PATH)
// reaches the pod's server on its loopback.
func (c *Cluster) NetworkNamespace(pod *corev1.Pod, container string) (string, error) {
	pids, err := c.containerPIDs(pod, container)
	if err != nil {
		return "", err
	}
	return "/proc/" + strconv.Itoa(pids[0]) + "/ns/net", nil
}

// ProcessStarts returns when each process of one container of a pod on
// the real node started (from /proc, to the second: the boot time's
// resolution): a server that
// its supervisor started again in place has a new process, which the
// kubelet does not see.
func (c *Cluster) ProcessStarts(pod *corev1.Pod, container string) (map[int]time.Time, error) {
	pids, err := c.containerPIDs(pod, container)
	if err != nil {
		return nil, err
	}
	boot, err := bootTime()
	if err != nil {
		return nil, err
	}
	starts := make(map[int]time.Time, len(pids))
	for _, pid := range pids {
		f, err := statFields(strconv.Itoa(pid))
		if err != nil {
			continue // ended since the cgroup was read
		}
		// starttime, field 22, in clock ticks after boot.
		if len(f) < 20 {
			return nil, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f)+2)
		}
		ticks, err := strconv.ParseInt(f[19], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("/proc/%d/stat starttime: %w", pid, err)
		}
		starts[pid] = boot.Add(time.Duration(ticks) * time.Second / userHZ)
	}
	return starts, nil
}

// bootTime is when the machine booted, /proc/stat's btime.
func bootTime() (time.Time, error) {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return time.Time{}, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "btime "); ok {
			s, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return time.Unix(s, 0), err
		}
	}
	return time.Time{}, fmt.Errorf("/proc/stat has no btime")
}
