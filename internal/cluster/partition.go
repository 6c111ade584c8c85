package cluster

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
)

// CutNetwork drops every packet to and from a pod on the real node, as a
// lost node or a network partition does: nothing is refused, nothing
// answers. The rules live in the pod's own network namespace (opened
// through a process of one of its containers, which the harness's
// containerd made), on its eth0 only, so that the pod's loopback keeps
// working and no rule touches the node's or the machine's network; they go
// with the pod's sandbox. heal removes them, even once the container has
// restarted: the namespace stays open until then.
func (c *Cluster) CutNetwork(pod *corev1.Pod, container string) (heal func() error, err error) {
	pids, err := c.containerPIDs(pod, container)
	if err != nil {
		return nil, err
	}
	ns, err := os.Open("/proc/" + strconv.Itoa(pids[0]) + "/ns/net")
	if err != nil {
		return nil, fmt.Errorf("open the network namespace of pod %s: %w", pod.Name, err)
	}
	rules := [][]string{{"INPUT", "-i", "eth0", "-j", "DROP"}, {"OUTPUT", "-o", "eth0", "-j", "DROP"}}
	iptables := func(op string, rule []string) error {
		// The namespace is the child's fd 3.
		cmd := exec.Command("nsenter", append([]string{"--net=/proc/self/fd/3", "--", "iptables", "-w", op}, rule...)...)
		cmd.ExtraFiles = []*os.File{ns}
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("iptables %s %s: %w: %s", op, strings.Join(rule, " "), err, strings.TrimSpace(string(out)))
		}
		return nil
	}
	for i, r := range rules {
		if err := iptables("-I", r); err != nil {
			for _, done := range rules[:i] {
				_ = iptables("-D", done)
			}
			_ = ns.Close()
			return nil, fmt.Errorf("cut the network of pod %s: %w", pod.Name, err)
		}
	}
	var once sync.Once
	return func() error {
		once.Do(func() {
			defer ns.Close()
			for _, r := range rules {
				if err = iptables("-D", r); err != nil {
					err = fmt.Errorf("heal the network of pod %s: %w", pod.Name, err)
					return
				}
			}
		})
		return err
	}, nil
}
