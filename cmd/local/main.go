// Command local is the main job in one command (`make run-local`): it starts
// a full local cluster, installs the operator's CRD and RBAC from the dev
// overlay, runs the manager, applies the sample MySQL, waits until kstatus
// says it is Current, prints it and its children, and keeps everything
// running until Ctrl-C.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
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
	flag.Parse()
	// The clients log only their errors; progress goes to the terminal.
	ctrl.SetLogger(zap.New(zap.Level(zapcore.ErrorLevel)))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *exitWhenReady, *timeout); err != nil {
		fmt.Fprintln(os.Stderr, "FAILED:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, exitWhenReady bool, timeout time.Duration) error {
	root, err := testenv.RepoRoot()
	if err != nil {
		return err
	}
	fmt.Println("==> starting a local cluster (etcd, kube-apiserver, controller-manager, scheduler, kwok)")
	c, err := cluster.Start(ctx, cluster.Options{Progress: prefixed("    ")})
	if err != nil {
		return err
	}
	defer func() {
		fmt.Println("==> stopping the local cluster; logs stay in", filepath.Join(c.Dir, "logs"))
		c.Stop()
	}()

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

	fmt.Println("==> applying the sample MySQL from kustomize/overlays/dev/databases")
	samples, err := cluster.Build(filepath.Join(root, "kustomize", "overlays", "dev", "databases"))
	if err != nil {
		return err
	}
	if err := cluster.Apply(ctx, c.Client, "mysql-operator-local", samples); err != nil {
		return err
	}
	for _, s := range samples {
		if err := waitCurrent(ctx, c.Client, s, timeout); err != nil {
			return fmt.Errorf("%w (manager log: %s)", err, c.LogPath("manager"))
		}
	}

	kubectl := func(args ...string) {
		cmd := exec.Command(filepath.Join(root, "bin", "kubectl"), append([]string{"--kubeconfig", c.Kubeconfig}, args...)...)
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		_ = cmd.Run()
	}
	fmt.Println("\n$ kubectl get my -o wide")
	kubectl("get", "my", "-o", "wide")
	fmt.Println("\n$ kubectl get statefulset,service,pdb,configmap,secret,pvc,pod -l app.kubernetes.io/instance=sample")
	kubectl("get", "statefulset,service,pdb,configmap,secret,pvc,pod", "-l", "app.kubernetes.io/instance=sample")
	fmt.Println("\n$ kubectl wait --for=condition=Ready my/sample")
	kubectl("wait", "--for=condition=Ready", "my/sample", "--timeout=30s")
	if exitWhenReady {
		return nil
	}
	fmt.Printf("\nThe cluster is running. In another shell:\n    export KUBECONFIG=%s\n    %s get my\nPress Ctrl-C to stop.\n", c.Kubeconfig, filepath.Join(root, "bin", "kubectl"))
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
