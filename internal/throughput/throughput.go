package throughput

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/controller/children"
	"github.com/example/mysql-operator/internal/cluster"
	"github.com/example/mysql-operator/internal/testenv"
)

// processes are the command names whose CPU time a run records: the
// servers and agents (in pods, or the bare server), the node's and the
// control plane's components, the manager and sysbench itself.
var processes = []string{"mariadbd", "mysqld", "agent", "kubelet", "kube-proxy", "containerd", "containerd-shim",
	"manager", "kube-apiserver", "etcd", "sysbench"}

// Variant is one setup measured.
type Variant struct {
	// Name says what was measured.
	Name string
	// Result is sysbench's.
	Result Result
	// CPU is each process's CPU time over the run.
	CPU cluster.CPU
	// Elapsed is the run's wall time.
	Elapsed time.Duration
}

// Options configure a measurement.
type Options struct {
	// Load is sysbench's workload.
	Load Load
	// Dir receives the bare server and the cluster's files.
	Dir string
	// Progress receives a line per step.
	Progress io.Writer
}

// Spec is the MySQL measured, on the real node: MariaDB 10.11 with 1 GiB
// of memory (so a 512 MiB buffer pool, as the operator derives it), no
// CPU limit, the cluster's default max_connections left to the operator.
func Spec(replicas int32) databasev1.MySQLSpec {
	s := cluster.RealNodeSpec(replicas)
	s.Config = nil
	s.StorageSize = "4Gi"
	mem := resource.MustParse("1Gi")
	s.Resources = corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceMemory: mem},
		Limits: corev1.ResourceList{corev1.ResourceMemory: mem}}
	return s
}

// Run measures the bare server, then a 1-instance MySQL through its
// primary Service and at its pod's address, then a 3-instance one
// through its primary Service.
func Run(ctx context.Context, o Options) ([]Variant, error) {
	var out []Variant
	for i, b := range bareSetups() {
		v, err := measureBare(ctx, o, b, filepath.Join(o.Dir, fmt.Sprintf("bare-%d", i)))
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	fmt.Fprintln(o.Progress, "==> the local cluster with the real node, and the operator")
	c, err := cluster.Start(ctx, cluster.Options{RealNode: true, Dir: filepath.Join(o.Dir, "cluster"), Progress: o.Progress})
	if err != nil {
		return nil, err
	}
	defer c.Stop()
	if err := startOperator(ctx, c); err != nil {
		return nil, err
	}
	more, err := measureCluster(ctx, o, c)
	return append(out, more...), err
}

// bareSetup is a way the bare server runs.
type bareSetup struct {
	name string
	// noIOUring: as under the runtime's default seccomp profile.
	noIOUring bool
	// controllers, when set, are the cgroup controllers in which the
	// server is moved into the kubelet's cgroups for the container.
	controllers []string
}

// bareSetups are the bare server as it is, without io_uring, and in the
// cgroups the kubelet makes for the container, first without the CPU
// controller (memory with the container's limit, processes, block I/O),
// then with it: the steps from the bare server towards a pod.
func bareSetups() []bareSetup {
	return []bareSetup{
		{name: "bare server, loopback"},
		{name: "bare server, loopback, no io_uring (libaio, as in a pod)", noIOUring: true},
		{name: "bare server, loopback, no io_uring, in the kubelet's memory, pids and blkio cgroups for the container",
			noIOUring: true, controllers: noCPUControllers},
		{name: "bare server, loopback, no io_uring, in the kubelet's cgroups for the container (with cpu)",
			noIOUring: true, controllers: allControllers},
	}
}

// measureBare starts the bare server of s under dir and measures it.
func measureBare(ctx context.Context, o Options, s bareSetup, dir string) (Variant, error) {
	fmt.Fprintf(o.Progress, "==> the %s, with the operator's my.cnf\n", s.name)
	spec := Spec(1)
	b, err := startBare(ctx, spec, dir, s.noIOUring)
	if err != nil {
		return Variant{}, err
	}
	g := &podCgroup{}
	if s.controllers != nil {
		if g, err = joinPodCgroup(b.cmd.Process.Pid, kubeletChain(spec), s.controllers); err != nil {
			b.stop()
			return Variant{}, err
		}
	}
	v, err := measure(ctx, o, s.name, b.target)
	b.stop()
	g.remove() // empty now
	return v, err
}

// setup is a MySQL measured, and the ways sysbench reaches it.
type setup struct {
	name string
	what string
	spec databasev1.MySQLSpec
	via  []string
}

// The ways sysbench reaches a MySQL: its primary Service from this
// machine (through the veth that joins the node to it) or from the node's
// network namespace (as a client on a node of a real cluster), its pod's
// address, or its pod's loopback from within the pod's network namespace.
const (
	viaService     = "primary Service"
	viaNodeService = "primary Service from the node"
	viaPod         = "pod address"
	viaLoopback    = "loopback in the pod's network namespace"
)

// setups are the MySQLs measured, one at a time: one instance with the
// limit of Spec, reached three ways (the Service's, the pod network's and
// the container's share of the gap); one without a memory limit, its
// buffer pool and connections set to what the limit gives; one with a CPU
// request (a pod without one gets the least CPU weight of its cgroup);
// three.
func setups() []setup {
	unlimited := Spec(1)
	unlimited.Resources = corev1.ResourceRequirements{}
	unlimited.Config = map[string]databasev1.ConfigValue{"innodb_buffer_pool_size": "512M", "max_connections": "64"}
	cpu := Spec(1)
	cpu.Resources.Requests[corev1.ResourceCPU] = resource.MustParse("1")
	return []setup{
		{name: "db1", what: "1 instance", spec: Spec(1), via: []string{viaService, viaNodeService, viaPod, viaLoopback}},
		{name: "db1nolimit", what: "1 instance, no memory limit", spec: unlimited, via: []string{viaService}},
		{name: "db1cpu", what: "1 instance, 1 CPU requested", spec: cpu, via: []string{viaService, viaNodeService, viaLoopback}},
		{name: "db3", what: "3 instances", spec: Spec(3), via: []string{viaService, viaNodeService}},
	}
}

// measureCluster measures the setups on the cluster, one at a time.
func measureCluster(ctx context.Context, o Options, c *cluster.Cluster) ([]Variant, error) {
	var out []Variant
	for _, s := range setups() {
		fmt.Fprintf(o.Progress, "==> %s\n", s.what)
		m, err := createMySQL(ctx, c, s.name, s.spec)
		if err != nil {
			return out, err
		}
		for _, via := range s.via {
			t, err := targetOf(ctx, c, m, via)
			if err != nil {
				return out, err
			}
			v, err := measure(ctx, o, s.what+", "+via, t)
			if err != nil {
				return out, err
			}
			out = append(out, v)
		}
		if err := c.Client.Delete(ctx, m); err != nil {
			return out, err
		}
	}
	return out, nil
}

// measure prepares sysbench's tables on t and runs the load, recording
// the CPU time of every process over the run.
func measure(ctx context.Context, o Options, name string, t target) (Variant, error) {
	fmt.Fprintf(o.Progress, "    %s: sysbench prepare\n", name)
	if err := o.Load.prepare(ctx, t); err != nil {
		return Variant{}, err
	}
	fmt.Fprintf(o.Progress, "    %s: sysbench run, %s\n", name, o.Load.Duration)
	before, start := cluster.ProcessesCPU(processes...), time.Now()
	r, err := o.Load.run(ctx, t)
	if err != nil {
		return Variant{}, err
	}
	v := Variant{Name: name, Result: r, CPU: cluster.ProcessesCPU(processes...).Since(before), Elapsed: time.Since(start)}
	fmt.Fprintf(o.Progress, "    %s: %.0f TPS, 95th percentile %s\n", name, r.TPS, r.P95)
	return v, nil
}

// startOperator installs the CRD and RBAC, builds and starts the manager.
func startOperator(ctx context.Context, c *cluster.Cluster) error {
	root, err := testenv.RepoRoot()
	if err != nil {
		return err
	}
	if err := c.InstallOperator(ctx, root, "mysql-operator-throughput"); err != nil {
		return err
	}
	bin, err := cluster.BuildManager(c.Dir)
	if err != nil {
		return err
	}
	_, err = c.StartManager(ctx, "manager", bin)
	return err
}

// createMySQL creates the MySQL name of spec and waits until it is
// Current.
func createMySQL(ctx context.Context, c *cluster.Cluster, name string, spec databasev1.MySQLSpec) (*databasev1.MySQL, error) {
	m := &databasev1.MySQL{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}, Spec: spec}
	if err := c.Client.Create(ctx, m); err != nil {
		return nil, err
	}
	var last status.Status
	err := wait.PollUntilContextTimeout(ctx, time.Second, 10*time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := c.Client.Get(ctx, client.ObjectKeyFromObject(m), m); err != nil {
			return false, nil
		}
		raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(m)
		if err != nil {
			return false, err
		}
		res, err := status.Compute(&unstructured.Unstructured{Object: raw})
		if err != nil {
			return false, nil
		}
		last = res.Status
		return last == status.CurrentStatus, nil
	})
	if err != nil {
		return nil, fmt.Errorf("MySQL %s never Current (last %s): %w", name, last, err)
	}
	return m, nil
}

// targetOf is m's primary as sysbench reaches it via, as root.
func targetOf(ctx context.Context, c *cluster.Cluster, m *databasev1.MySQL, via string) (target, error) {
	svc, secret, pod := &corev1.Service{}, &corev1.Secret{}, &corev1.Pod{}
	if err := c.Client.Get(ctx, client.ObjectKey{Namespace: m.Namespace, Name: children.PrimaryServiceName(m)}, svc); err != nil {
		return target{}, err
	}
	name, key := children.PasswordRef(m)
	if err := c.Client.Get(ctx, client.ObjectKey{Namespace: m.Namespace, Name: name}, secret); err != nil {
		return target{}, err
	}
	if err := c.Client.Get(ctx, client.ObjectKey{Namespace: m.Namespace, Name: m.Status.CurrentPrimary}, pod); err != nil {
		return target{}, err
	}
	t := target{host: svc.Spec.ClusterIP, port: children.MySQLPort, password: string(secret.Data[key])}
	switch via {
	case viaNodeService:
		t.netns, t.prepareHost = c.NodeNetworkNamespace(), t.host
	case viaPod:
		t.host = pod.Status.PodIP
	case viaLoopback:
		ns, err := c.NetworkNamespace(pod, children.ServerContainerName)
		if err != nil {
			return target{}, err
		}
		t.host, t.netns, t.prepareHost = "127.0.0.1", ns, pod.Status.PodIP
	}
	return t, nil
}
