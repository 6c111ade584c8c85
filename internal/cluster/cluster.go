// Package cluster runs a full local Kubernetes control plane from the
// binaries in bin/: etcd, kube-apiserver (token auth, RBAC), the
// kube-controller-manager's controllers, kube-scheduler, and KWOK faking
// nodes, pod readiness and volume provisioning. It is what e2e tests,
// benchmarks and `make run-local` run on. Each component logs to a file
// under the cluster's directory, kept for failures.
package cluster

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/example/mysql-operator/internal/s3test"
	"github.com/example/mysql-operator/internal/testenv"
)

// Tokens of the cluster's static token file.
const (
	adminToken    = "admin-token"
	operatorToken = "operator-token"
	// OperatorUser is the user of the operator's token: the operator's
	// ServiceAccount name, so that the kustomize RBAC bindings apply to it.
	OperatorUser = "system:serviceaccount:mysql-operator-system:mysql-operator-controller-manager"
	// NodeAnnotation marks the nodes KWOK manages.
	NodeAnnotation = "kwok.x-k8s.io/node"
)

// Options configure a local cluster.
type Options struct {
	// Bin is the directory of the binaries; empty means testenv.BinDir().
	Bin string
	// Dir holds data, certificates, kubeconfigs and logs; empty means a new temporary directory.
	Dir string
	// Nodes is how many fake nodes to create; 0 means 3, or none with a
	// real node.
	Nodes int
	// RealNode runs a real kubelet node (containerd, runc, CNI, CoreDNS,
	// kube-proxy) that really starts containers, in a network namespace of
	// its own. It needs root on Linux and `make node`. When the cluster has
	// KWOK nodes too, the real node is tainted with RealNodeTaint.
	RealNode bool
	// Progress receives a line per step; nil discards them.
	Progress io.Writer
}

// Cluster is a running local cluster.
type Cluster struct {
	opts Options
	// Dir holds everything of the cluster.
	Dir string
	// Kubeconfig is the path of the admin kubeconfig.
	Kubeconfig string
	// OperatorKubeconfig is the path of the operator's kubeconfig.
	OperatorKubeconfig string
	// Config is the admin rest config.
	Config *rest.Config
	// Client is an uncached admin client.
	Client client.Client

	ports    map[string]int
	procs    map[string]*process
	managers []*Manager
	order    []string

	// net and record are the real node's network and teardown record;
	// nil without a real node.
	net    *nodeNet
	record *nodeRecord
	// stopStorage stops the volume provisioner of the real node and KWOK.
	stopStorage func()
	// S3 is the real node's S3 server (versitygw); nil without a real node.
	S3 *s3test.Server
	// PrometheusURL is the real node's Prometheus (internal/cluster/prometheus.go);
	// empty without a real node.
	PrometheusURL string
}

// Start starts every component in order and waits for each to be ready. On
// failure it stops what it started and says which component failed and
// where its log is.
func Start(ctx context.Context, opts Options) (c *Cluster, err error) {
	if opts.Bin == "" {
		if opts.Bin, err = testenv.BinDir(); err != nil {
			return nil, err
		}
	}
	if opts.Nodes == 0 && !opts.RealNode {
		opts.Nodes = 3
	}
	if opts.Progress == nil {
		opts.Progress = io.Discard
	}
	if opts.Dir == "" {
		if opts.Dir, err = os.MkdirTemp("", "mysql-operator-cluster-"); err != nil {
			return nil, err
		}
	}
	c = &Cluster{opts: opts, Dir: opts.Dir, ports: map[string]int{}, procs: map[string]*process{}}
	// A failed start stops what it started: the deferred function gets the
	// cluster itself, as the failing return sets c to nil.
	defer func(made *Cluster) {
		if err != nil {
			made.Stop()
		}
	}(c)
	for _, d := range []string{"logs", "pki", "etcd"} {
		if err := os.MkdirAll(filepath.Join(c.Dir, d), 0o700); err != nil {
			return nil, err
		}
	}
	for _, name := range []string{"etcd-client", "etcd-peer", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok"} {
		if c.ports[name], err = testenv.FreePort(); err != nil {
			return nil, err
		}
	}
	if opts.RealNode {
		if err := c.startNodeNet(ctx); err != nil {
			return nil, fmt.Errorf("node network: %w", err)
		}
	}
	if err := c.writeFiles(); err != nil {
		return nil, err
	}
	steps := c.steps()
	for _, s := range steps {
		begin := time.Now()
		fmt.Fprintf(opts.Progress, "starting %s ...\n", s.name)
		if err := s.start(ctx); err != nil {
			return nil, fmt.Errorf("%s failed: %w (log: %s)", s.name, err, c.LogPath(s.name))
		}
		fmt.Fprintf(opts.Progress, "%s up in %s\n", s.name, time.Since(begin).Round(10*time.Millisecond))
	}
	return c, nil
}

// step is one component of the cluster, started in order.
type step struct {
	name  string
	start func(context.Context) error
}

// steps are the components to start: the control plane, KWOK and its
// nodes when the cluster has any, the real node's when it has one.
func (c *Cluster) steps() []step {
	steps := []step{
		{"etcd", c.startEtcd},
		{"kube-apiserver", c.startAPIServer},
		{"kube-controller-manager", c.startControllerManager},
		{"kube-scheduler", c.startScheduler},
	}
	if c.opts.Nodes > 0 {
		steps = append(steps, step{"kwok", c.startKwok}, step{"nodes", c.createNodes})
	}
	if c.opts.RealNode {
		steps = append(steps, step{"containerd", c.startContainerd}, step{"coredns", c.startCoreDNS},
			step{"kubelet", c.startKubelet}, step{"kube-proxy", c.startKubeProxy}, step{"s3", c.startS3},
			step{"prometheus", c.startPrometheus})
	}
	if c.opts.RealNode || c.opts.Nodes > 0 {
		steps = append(steps, step{"storage", c.startStorage})
	}
	return steps
}

// LogPath returns the log file of a component.
func (c *Cluster) LogPath(component string) string {
	return filepath.Join(c.Dir, "logs", component+".log")
}

// OperatorConfig returns the rest config of the operator's user.
func (c *Cluster) OperatorConfig() *rest.Config {
	cfg := rest.CopyConfig(c.Config)
	cfg.BearerToken = operatorToken
	return cfg
}

// Stop stops every manager and component, the last started first, and
// tears the real node down: what runs in its pods, its mounts, cgroups,
// network namespace and volumes go with it.
func (c *Cluster) Stop() {
	for _, m := range c.managers {
		m.Stop()
	}
	c.managers = nil
	c.stopS3()
	if c.stopStorage != nil {
		c.stopStorage()
		c.stopStorage = nil
	}
	for i := len(c.order) - 1; i >= 0; i-- {
		if c.order[i] == "containerd" && c.record != nil {
			// The kubelet is stopped: nothing restarts the pods.
			killCgroup(c.record.CgroupRoot)
		}
		c.stopProcess(c.order[i])
	}
	c.order = nil
	if c.record != nil {
		if err := c.record.teardown(); err != nil {
			fmt.Fprintf(c.opts.Progress, "teardown of the real node: %v\n", err)
		}
		c.record, c.net = nil, nil
	}
}

// RestartAPIServer stops kube-apiserver and starts it again on the same port.
func (c *Cluster) RestartAPIServer(ctx context.Context) error {
	c.stopProcess("kube-apiserver")
	return c.startAPIServer(ctx)
}

// startProcess starts a component binary of bin/ (or an absolute path) and
// records it under name, in start order.
func (c *Cluster) startProcess(name, binary string, args ...string) error {
	return c.startProcessEnv(name, nil, binary, args...)
}

// startProcessEnv is startProcess with env added to the environment.
func (c *Cluster) startProcessEnv(name string, env []string, binary string, args ...string) error {
	if !strings.Contains(binary, "/") {
		binary = filepath.Join(c.opts.Bin, binary)
	}
	p, err := launchEnv(c.LogPath(name), env, binary, args...)
	if err != nil {
		return err
	}
	c.procs[name] = p
	if !slices.Contains(c.order, name) {
		c.order = append(c.order, name)
	}
	return nil
}

// stopProcess stops the component name, SIGTERM first.
func (c *Cluster) stopProcess(name string) {
	if p := c.procs[name]; p != nil {
		p.stop(syscall.SIGTERM)
		delete(c.procs, name)
	}
}
