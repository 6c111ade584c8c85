package cluster

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// nodeNet is the network of the real node. The node lives in a network
// namespace of its own, joined to the host by a veth pair the cluster
// creates: every address is on an interface of the cluster's, never the
// machine's own network, and deleting the namespace takes the node's
// bridge, its pods' links and every iptables rule kube-proxy and the CNI
// plugins wrote with it. The host reaches pods and Service ClusterIPs by
// routes through the veth; the node reaches the API server at the host
// end of the veth.
type nodeNet struct {
	// index picks the addresses, so that several clusters can run at once.
	index int
	// Netns is the name of the node's network namespace.
	Netns string
	// hostLink is the host end of the veth.
	hostLink string
}

// maxNodeNets bounds the clusters with a real node at once on one machine.
const maxNodeNets = 32

// netnsPrefix starts the name of every network namespace a cluster makes.
const netnsPrefix = "mysqlop-"

// HostIP is the host end of the veth, where the API server listens.
func (n *nodeNet) HostIP() string { return fmt.Sprintf("10.213.%d.1", n.index) }

// NodeIP is the node's address, where the kubelet and CoreDNS listen.
func (n *nodeNet) NodeIP() string { return fmt.Sprintf("10.213.%d.2", n.index) }

// PodCIDR is the range of the node's pod addresses.
func (n *nodeNet) PodCIDR() string { return fmt.Sprintf("10.214.%d.0/24", n.index) }

// ServiceCIDR is the range of the cluster's Service ClusterIPs.
func (n *nodeNet) ServiceCIDR() string { return fmt.Sprintf("10.%d.0.0/16", 96+n.index) }

// createNodeNet takes the first free index and makes its namespace, veth
// and routes. A namespace left by a cluster whose process is gone is torn
// down first (see reapStale).
func createNodeNet() (*nodeNet, error) {
	reapStale()
	for i := range maxNodeNets {
		n := &nodeNet{index: i, Netns: fmt.Sprintf("%s%d", netnsPrefix, i), hostLink: fmt.Sprintf("mysqlop%d", i)}
		if err := run("ip", "netns", "add", n.Netns); err != nil {
			continue // taken by another cluster
		}
		if err := n.setUp(); err != nil {
			n.delete()
			return nil, err
		}
		return n, nil
	}
	return nil, fmt.Errorf("no free node network: %d clusters with a real node run already", maxNodeNets)
}

// setUp links the namespace to the host and routes pods and Services to it.
func (n *nodeNet) setUp() error {
	steps := [][]string{
		{"ip", "link", "add", n.hostLink, "type", "veth", "peer", "name", "eth0", "netns", n.Netns},
		{"ip", "addr", "add", n.HostIP() + "/30", "dev", n.hostLink},
		{"ip", "link", "set", n.hostLink, "up"},
		{"ip", "-n", n.Netns, "addr", "add", n.NodeIP() + "/30", "dev", "eth0"},
		{"ip", "-n", n.Netns, "link", "set", "eth0", "up"},
		{"ip", "-n", n.Netns, "link", "set", "lo", "up"},
		{"ip", "netns", "exec", n.Netns, "sysctl", "-q", "-w", "net.ipv4.ip_forward=1"},
		// A client on the node reaches Service ClusterIPs: the route is
		// looked up before kube-proxy's rules rewrite the address to a
		// pod's (a real node has a default route).
		{"ip", "-n", n.Netns, "route", "add", n.ServiceCIDR(), "via", n.HostIP()},
		{"ip", "route", "add", n.PodCIDR(), "via", n.NodeIP()},
		{"ip", "route", "add", n.ServiceCIDR(), "via", n.NodeIP()},
	}
	for _, s := range steps {
		if err := run(s[0], s[1:]...); err != nil {
			return err
		}
	}
	return nil
}

// delete deletes the namespace and the host end of the veth; the routes
// through it go with it.
func (n *nodeNet) delete() {
	_ = run("ip", "link", "del", n.hostLink)
	_ = run("ip", "netns", "del", n.Netns)
}

// command returns the argv that runs binary with args in the namespace.
// nsenter enters the network namespace only: `ip netns exec` would also
// give the process a mount namespace of its own, with a /sys without the
// cgroup hierarchies, where the kubelet's volume mounts would be invisible
// to containerd's.
func (n *nodeNet) command(binary string, args ...string) (string, []string) {
	return "nsenter", append([]string{"--net=" + n.path(), "--", binary}, args...)
}

// path is the namespace's file.
func (n *nodeNet) path() string { return "/run/netns/" + n.Netns }

// NodeNetworkNamespace is the path of the real node's network namespace:
// a command run in it (nsenter --net=PATH) is a client on the node, as
// a process of the host's network is on a node of a real cluster, and
// reaches Services and pods without the veth that joins the node to this
// machine. Empty without a real node.
func (c *Cluster) NodeNetworkNamespace() string {
	if c.net == nil {
		return ""
	}
	return c.net.path()
}

// run runs a command and returns its output in the error when it fails.
func run(name string, args ...string) error {
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// isRoot says whether the process can make namespaces, mounts and cgroups.
func isRoot() bool { return os.Geteuid() == 0 }
