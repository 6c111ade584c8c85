// Command local is the main job in one command (`make run-local`): it starts
// a full local cluster, with a real kubelet node where it can (root on
// Linux, `make node` built) and KWOK fake nodes otherwise, installs the
// operator's CRD and RBAC from the dev overlay, runs the manager, applies
// the sample MySQL, waits until kstatus says it is Current, queries the
// server through the client Service with the generated password, prints
// how to connect, and keeps everything running until Ctrl-C.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"syscall"
	"time"

	"go.uber.org/zap/zapcore"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/example/mysql-operator/internal/cluster"
	"github.com/example/mysql-operator/internal/testenv"
)

func main() {
	exitWhenReady := flag.Bool("exit-when-ready", false, "Stop everything once the sample is Ready, instead of waiting for Ctrl-C.")
	timeout := flag.Duration("timeout", 5*time.Minute, "How long to wait for the sample MySQL to become Ready.")
	kwok := flag.Bool("kwok", false, "Use KWOK fake nodes even where a real node can run (no database server runs then).")
	flag.Parse()
	// The clients log only their errors; progress goes to the terminal.
	ctrl.SetLogger(zap.New(zap.Level(zapcore.ErrorLevel)))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *exitWhenReady, *kwok, *timeout); err != nil {
		fmt.Fprintln(os.Stderr, "FAILED:", err)
		os.Exit(1)
	}
}

// realNodeUnavailable says why the real node cannot run here, "" when it can.
func realNodeUnavailable(bin string) string {
	switch {
	case runtime.GOOS != "linux":
		return "the real node needs Linux"
	case os.Geteuid() != 0:
		return "the real node needs root (network namespaces, mounts, cgroups)"
	}
	for _, b := range []string{"kubelet", "containerd", "runc", "coredns", "images/mariadb-10.11-rootfs.tar"} {
		if _, err := os.Stat(filepath.Join(bin, b)); err != nil {
			return "bin/" + b + " is missing: run `make node`"
		}
	}
	return ""
}

func run(ctx context.Context, exitWhenReady, kwok bool, timeout time.Duration) error {
	root, err := testenv.RepoRoot()
	if err != nil {
		return err
	}
	why := "asked for with -kwok"
	if !kwok {
		why = realNodeUnavailable(filepath.Join(root, "bin"))
	}
	real := why == ""
	if real {
		fmt.Println("==> starting a local cluster with a real node (etcd, kube-apiserver, controller-manager, scheduler, containerd, kubelet, kube-proxy, CoreDNS)")
	} else {
		fmt.Printf("==> starting a local cluster with KWOK fake nodes: no database server will run (%s)\n", why)
	}
	c, err := cluster.Start(ctx, cluster.Options{RealNode: real, Progress: prefixed("    ")})
	if err != nil {
		return err
	}
	defer func() {
		fmt.Println("==> stopping the local cluster; logs stay in", filepath.Join(c.Dir, "logs"))
		c.Stop()
	}()
	if err := startOperator(ctx, c, root); err != nil {
		return err
	}
	sample, err := applySample(ctx, c, root, real)
	if err != nil {
		return err
	}
	if err := waitCurrent(ctx, c.Client, sample, timeout); err != nil {
		return fmt.Errorf("%w (manager log: %s)", err, c.LogPath("manager"))
	}
	return show(ctx, c, root, sample, real, exitWhenReady)
}

// startOperator installs the CRD and RBAC and starts the manager.
func startOperator(ctx context.Context, c *cluster.Cluster, root string) error {
	fmt.Println("==> installing the CRD and RBAC from kustomize/overlays/dev")
	if err := c.InstallOperator(ctx, root, "mysql-operator-local"); err != nil {
		return err
	}
	fmt.Println("==> building and starting the manager (as the operator's ServiceAccount user)")
	bin, err := cluster.BuildManager(c.Dir)
	if err != nil {
		return err
	}
	if _, err := c.StartManager(ctx, "manager", bin); err != nil {
		return err
	}
	fmt.Println("    manager up; log:", c.LogPath("manager"))
	return nil
}

// applySample applies the dev overlay's MySQL; on the real node, with the
// MariaDB image built here, since no registry is reachable.
func applySample(ctx context.Context, c *cluster.Cluster, root string, real bool) (*unstructured.Unstructured, error) {
	fmt.Println("==> applying the sample MySQL from kustomize/overlays/dev/databases")
	samples, err := cluster.Build(filepath.Join(root, "kustomize", "overlays", "dev", "databases"))
	if err != nil {
		return nil, err
	}
	if len(samples) != 1 {
		return nil, fmt.Errorf("the dev overlay's databases hold %d objects, want 1", len(samples))
	}
	if real {
		fmt.Printf("    spec.image set to %s, the MariaDB 10.11 image built from Debian's packages\n", cluster.MariaDBImage)
		if err := unstructured.SetNestedField(samples[0].Object, cluster.MariaDBImage, "spec", "image"); err != nil {
			return nil, err
		}
	}
	return samples[0], cluster.Apply(ctx, c.Client, "mysql-operator-local", samples)
}

// show prints the MySQL and its children, queries the server on the real
// node, and waits for Ctrl-C unless exitWhenReady.
func show(ctx context.Context, c *cluster.Cluster, root string, sample *unstructured.Unstructured, real, exitWhenReady bool) error {
	kubectl := func(args ...string) {
		cmd := exec.Command(filepath.Join(root, "bin", "kubectl"), append([]string{"--kubeconfig", c.Kubeconfig}, args...)...)
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		_ = cmd.Run()
	}
	name := sample.GetName()
	fmt.Println("\n$ kubectl get my -o wide")
	kubectl("get", "my", "-o", "wide")
	fmt.Printf("\n$ kubectl get statefulset,service,pdb,configmap,secret,pvc,pod -l app.kubernetes.io/instance=%s\n", name)
	kubectl("get", "statefulset,service,pdb,configmap,secret,pvc,pod", "-l", "app.kubernetes.io/instance="+name)
	fmt.Printf("\n$ kubectl wait --for=condition=Ready my/%s\n", name)
	kubectl("wait", "--for=condition=Ready", "my/"+name, "--timeout=30s")
	connect := ""
	if real {
		var err error
		if connect, err = queryVersion(ctx, c, sample); err != nil && os.Getenv("DEBUG_KEEP") == "" {
			return err
		}
	}
	if exitWhenReady {
		return nil
	}
	if c.PrometheusURL != "" {
		connect += fmt.Sprintf("    kubectl mysql status %s   # make plugin, bin/ on PATH\n    Prometheus (the agents, the alerting rules): %s/alerts\n", name, c.PrometheusURL)
	}
	fmt.Printf("\nThe cluster is running. In another shell:\n    export KUBECONFIG=%s\n    %s get my\n%sPress Ctrl-C to stop.\n",
		c.Kubeconfig, filepath.Join(root, "bin", "kubectl"), connect)
	<-ctx.Done()
	return nil
}

// waitCurrent polls the object's kstatus until Current, printing each change.
func waitCurrent(ctx context.Context, c client.Client, obj *unstructured.Unstructured, timeout time.Duration) error {
	fmt.Printf("==> waiting for %s %s/%s to be Current (kstatus)\n", obj.GetKind(), obj.GetNamespace(), obj.GetName())
	last := ""
	begin := time.Now()
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(obj.GroupVersionKind())
		if err := c.Get(ctx, client.ObjectKeyFromObject(obj), u); err != nil {
			return false, nil
		}
		res, err := status.Compute(u)
		if err != nil {
			return false, err
		}
		if line := fmt.Sprintf("%s: %s", res.Status, res.Message); line != last {
			fmt.Printf("    [%5.1fs] %s\n", time.Since(begin).Seconds(), line)
			last = line
		}
		return res.Status == status.CurrentStatus, nil
	})
	if err != nil {
		return fmt.Errorf("%s %s not Current after %s, last: %s: %w", obj.GetKind(), obj.GetName(), timeout, last, err)
	}
	return nil
}

// prefixed writes each line with a prefix to stdout.
type prefixed string

func (p prefixed) Write(b []byte) (int, error) {
	fmt.Print(string(p) + string(b))
	return len(b), nil
}
