package cluster

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// RealNodeName is the name of the real kubelet node.
const RealNodeName = "real-node"

// RealNodeTaint keeps pods off the real node unless they tolerate it, when
// the cluster also has KWOK nodes: a pod of a control-plane test, with an
// image that exists nowhere, must not land on a node that really pulls.
const RealNodeTaint = "mysql-operator.example.com/real-node"

// nodeDir returns a path under the real node's directory.
func (c *Cluster) nodeDir(parts ...string) string {
	return filepath.Join(append([]string{c.Dir, "node"}, parts...)...)
}

// startNodeNet makes the node's network namespace before the API server
// starts, since the API server listens at the host end of its veth, and
// records the node for teardown.
func (c *Cluster) startNodeNet(context.Context) error {
	n, err := createNodeNet()
	if err != nil {
		return err
	}
	c.net = n
	c.record = &nodeRecord{PID: os.Getpid(), Dir: c.Dir, Netns: n.Netns, HostLink: n.hostLink, CgroupRoot: "/" + n.Netns}
	if err := c.record.save(); err != nil {
		return err
	}
	for _, d := range []string{"containerd", "cni/net.d", "cni/ipam", "kubelet", "pod-logs", "coredns", "volumes"} {
		if err := os.MkdirAll(c.nodeDir(d), 0o755); err != nil {
			return err
		}
	}
	return nil
}

// startInNetns starts a node component in the node's network namespace.
func (c *Cluster) startInNetns(name, binary string, args ...string) error {
	bin, argv := c.net.command(filepath.Join(c.opts.Bin, binary), args...)
	path, err := exec.LookPath(bin)
	if err != nil {
		return err
	}
	return c.startProcess(name, path, argv...)
}

// startContainerd starts containerd with everything under the node's
// directory and waits until it answers, then imports the images.
func (c *Cluster) startContainerd(ctx context.Context) error {
	cfg := c.nodeDir("containerd", "config.toml")
	if err := os.WriteFile(cfg, []byte(containerdConfig(c.opts.Bin, c.nodeDir("containerd"), c.nodeDir("cni"))), 0o600); err != nil {
		return err
	}
	cni := cniConfig(c.net.PodCIDR(), c.nodeDir("cni", "ipam"))
	if err := os.WriteFile(c.nodeDir("cni", "net.d", "10-mysqlop.conflist"), []byte(cni), 0o644); err != nil {
		return err
	}
	// The shim is found on PATH; the test binary's PATH may lack bin/.
	if err := os.Setenv("PATH", c.opts.Bin+string(os.PathListSeparator)+os.Getenv("PATH")); err != nil {
		return err
	}
	if err := c.startInNetns("containerd", "containerd", "--config", cfg); err != nil {
		return err
	}
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		if c.procs["containerd"].exited() {
			return false, fmt.Errorf("exited: %s", c.procs["containerd"].cmd.ProcessState)
		}
		return c.ctr("version") == nil, nil
	})
	if err != nil {
		return err
	}
	return c.importImages(ctx)
}

// ctr runs containerd's client against the node's containerd, in the
// namespace the kubelet uses.
func (c *Cluster) ctr(args ...string) error {
	return run(filepath.Join(c.opts.Bin, "ctr"), append([]string{"--address", c.nodeDir("containerd", "containerd.sock"), "--namespace", "k8s.io"}, args...)...)
}

// startCoreDNS serves cluster DNS at the node's address from the API server.
func (c *Cluster) startCoreDNS(ctx context.Context) error {
	ip := c.net.NodeIP()
	corefile := fmt.Sprintf(`.:53 {
    bind %[1]s
    errors
    health %[1]s:8080
    ready %[1]s:8181
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        kubeconfig %[2]s
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
        ttl 5
    }
    cache 5
}
`, ip, c.Kubeconfig)
	path := c.nodeDir("coredns", "Corefile")
	if err := os.WriteFile(path, []byte(corefile), 0o600); err != nil {
		return err
	}
	if err := c.startInNetns("coredns", "coredns", "-conf", path); err != nil {
		return err
	}
	return waitHTTP(ctx, c.procs["coredns"], "http://"+ip+":8181/ready", nil)
}

// startKubelet starts the kubelet and waits for its node to be Ready.
func (c *Cluster) startKubelet(ctx context.Context) error {
	if err := makeCgroup(c.record.CgroupRoot); err != nil {
		return err
	}
	if err := os.WriteFile(c.nodeDir("resolv.conf"), nil, 0o644); err != nil {
		return err
	}
	cfg := c.nodeDir("kubelet.yaml")
	if err := os.WriteFile(cfg, []byte(c.kubeletConfig()), 0o600); err != nil {
		return err
	}
	args := []string{"--config=" + cfg, "--kubeconfig=" + c.Kubeconfig, "--root-dir=" + c.nodeDir("kubelet"),
		"--hostname-override=" + RealNodeName, "--node-ip=" + c.net.NodeIP(),
		"--node-labels=type=real,kubernetes.io/os=linux"}
	if err := c.startInNetns("kubelet", "kubelet", args...); err != nil {
		return err
	}
	if err := waitHTTP(ctx, c.procs["kubelet"], "http://"+c.net.NodeIP()+":10248/healthz", nil); err != nil {
		return err
	}
	return c.waitNodeReady(ctx, RealNodeName)
}

// startKubeProxy starts kube-proxy in iptables mode; its rules live in the
// node's namespace.
func (c *Cluster) startKubeProxy(ctx context.Context) error {
	cfg := c.nodeDir("kube-proxy.yaml")
	if err := os.WriteFile(cfg, []byte(c.kubeProxyConfig()), 0o600); err != nil {
		return err
	}
	if err := c.startInNetns("kube-proxy", "kube-proxy", "--config="+cfg); err != nil {
		return err
	}
	return waitHTTP(ctx, c.procs["kube-proxy"], "http://"+c.net.NodeIP()+":10256/healthz", nil)
}

// waitNodeReady waits until the node reports Ready.
func (c *Cluster) waitNodeReady(ctx context.Context, name string) error {
	return wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		node := &corev1.Node{}
		if err := c.Client.Get(ctx, client.ObjectKey{Name: name}, node); err != nil {
			return false, nil
		}
		for _, cond := range node.Status.Conditions {
			if cond.Type == corev1.NodeReady {
				return cond.Status == corev1.ConditionTrue, nil
			}
		}
		return false, nil
	})
}

// quote renders a string as a YAML or TOML double-quoted scalar.
func quote(s string) string { return strconv.Quote(s) }
