package cluster

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	corev1 "k8s.io/api/core/v1"
)

// KillContainer kills with SIGKILL every process of one container of a pod
// on the real node, as an out-of-memory kill or a crash would: the kubelet
// restarts it; the pod stays.
func (c *Cluster) KillContainer(pod *corev1.Pod, container string) error {
	if c.record == nil {
		return fmt.Errorf("the cluster has no real node")
	}
	var id string
	for _, s := range pod.Status.ContainerStatuses {
		if s.Name == container {
			id = strings.TrimPrefix(s.ContainerID, "containerd://")
		}
	}
	if id == "" {
		return fmt.Errorf("pod %s has no running container %s", pod.Name, container)
	}
	killed := 0
	root := filepath.Join("/sys/fs/cgroup/pids", c.record.CgroupRoot)
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() || filepath.Base(path) != id {
			return nil
		}
		data, _ := os.ReadFile(filepath.Join(path, "cgroup.procs"))
		for _, f := range strings.Fields(string(data)) {
			if pid, err := strconv.Atoi(f); err == nil && syscall.Kill(pid, syscall.SIGKILL) == nil {
				killed++
			}
		}
		return filepath.SkipDir
	})
	if err == nil && killed == 0 {
		err = fmt.Errorf("no process of container %s (%s) found under %s", container, id, root)
	}
	return err
}
