package cluster

import (
	"fmt"
	"path/filepath"
)

// containerdConfig is containerd's configuration: root, state, sockets,
// runc's state and CNI under the node's directory; the pause image is the
// one the cluster imports; oom_score_adj is never lowered (this kind of
// host refuses a negative one, even to root); network namespaces are
// mounted under the state directory, so teardown finds them.
func containerdConfig(bin, dir, cniDir string) string {
	return fmt.Sprintf(`version = 3
root = %[2]s
state = %[3]s
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.erofs", "io.containerd.nri.v1.nri", "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]

[grpc]
  address = %[4]s

[ttrpc]
  address = %[5]s

[plugins]
  [plugins.'io.containerd.internal.v1.opt']
    path = %[6]s
  [plugins.'io.containerd.cri.v1.images']
    snapshotter = 'overlayfs'
    [plugins.'io.containerd.cri.v1.images'.pinned_images]
      sandbox = %[7]s
  [plugins.'io.containerd.cri.v1.runtime']
    restrict_oom_score_adj = true
    netns_mounts_under_state_dir = true
    enable_unprivileged_ports = false
    enable_unprivileged_icmp = false
    [plugins.'io.containerd.cri.v1.runtime'.containerd]
      default_runtime_name = 'runc'
      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
        runtime_type = 'io.containerd.runc.v2'
        [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
          BinaryName = %[8]s
          Root = %[9]s
          SystemdCgroup = false
    [plugins.'io.containerd.cri.v1.runtime'.cni]
      bin_dirs = [%[10]s]
      conf_dir = %[11]s
  [plugins.'io.containerd.grpc.v1.cri']
    stream_server_address = '127.0.0.1'
    stream_server_port = '0'
`, bin, quote(filepath.Join(dir, "root")), quote(filepath.Join(dir, "state")),
		quote(filepath.Join(dir, "containerd.sock")), quote(filepath.Join(dir, "containerd.sock.ttrpc")),
		quote(filepath.Join(dir, "opt")), quote(PauseImage), quote(filepath.Join(bin, "runc")),
		quote(filepath.Join(dir, "runc")), quote(filepath.Join(bin, "cni")), quote(filepath.Join(cniDir, "net.d")))
}

// cniConfig is the node's pod network: a bridge in the node's namespace,
// addresses from the node's pod range, hairpin so that a pod reaches
// itself through a Service.
func cniConfig(podCIDR, ipamDir string) string {
	return fmt.Sprintf(`{
  "cniVersion": "1.0.0",
  "name": "mysqlop",
  "plugins": [
    {"type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": true, "hairpinMode": true,
     "ipam": {"type": "host-local", "ranges": [[{"subnet": %s}]], "routes": [{"dst": "0.0.0.0/0"}], "dataDir": %s}},
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
`, quote(podCIDR), quote(ipamDir))
}

// kubeletConfig is the kubelet's configuration: cgroup v1 with the
// cgroupfs driver under a cgroup root of the node's own, no negative
// oom_score_adj, DNS at the node's address, logs and state under the
// node's directory, and eviction and image collection thresholds low
// enough that a busy test machine never evicts the databases.
func (c *Cluster) kubeletConfig() string {
	taints := ""
	if c.opts.Nodes > 0 {
		taints = fmt.Sprintf("registerWithTaints:\n- key: %s\n  effect: NoSchedule\n", RealNodeTaint)
	}
	return fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
cgroupDriver: cgroupfs
cgroupRoot: %[1]s
oomScoreAdj: 0
containerRuntimeEndpoint: unix://%[2]s
address: %[3]s
healthzBindAddress: %[3]s
readOnlyPort: 0
authentication:
  anonymous:
    enabled: true
  webhook:
    enabled: false
authorization:
  mode: AlwaysAllow
clusterDomain: cluster.local
clusterDNS: [%[3]s]
resolvConf: %[4]s
podLogsDir: %[5]s
failSwapOn: false
localStorageCapacityIsolation: false
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard:
  memory.available: 100Mi
  nodefs.available: 1%%
  imagefs.available: 1%%
  nodefs.inodesFree: 1%%
serializeImagePulls: false
%[6]s`, c.record.CgroupRoot, c.nodeDir("containerd", "containerd.sock"), c.net.NodeIP(),
		c.nodeDir("resolv.conf"), c.nodeDir("pod-logs"), taints)
}

// kubeProxyConfig is kube-proxy's configuration: iptables mode, no
// conntrack sysctls (they are the host's, not the namespace's), NodePorts
// on the node's address only.
func (c *Cluster) kubeProxyConfig() string {
	return fmt.Sprintf(`apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection:
  kubeconfig: %[1]s
hostnameOverride: %[2]s
bindAddress: %[3]s
healthzBindAddress: %[3]s:10256
metricsBindAddress: 127.0.0.1:10249
mode: iptables
clusterCIDR: %[4]s
oomScoreAdj: 0
conntrack:
  maxPerCore: 0
  min: 0
  tcpEstablishedTimeout: 0s
  tcpCloseWaitTimeout: 0s
nodePortAddresses: [%[3]s/32]
`, c.Kubeconfig, RealNodeName, c.net.NodeIP(), c.net.PodCIDR())
}
