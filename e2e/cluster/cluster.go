// Package cluster runs a full local Kubernetes control plane from the
// binaries in bin/: etcd, kube-apiserver (token auth, RBAC), the
// kube-controller-manager's controllers, kube-scheduler, and KWOK faking
// nodes, pod readiness and volume provisioning. It is what e2e tests,
// benchmarks and `make run-local` run on. Each component logs to a file
// under the cluster's directory, kept for failures.
package cluster

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

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
	// Nodes is how many fake nodes to create; 0 means 3.
	Nodes int
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
}

// process is a running component; done closes when it exits.
type process struct {
	cmd  *exec.Cmd
	done chan struct{}
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
	if opts.Nodes == 0 {
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
	defer func() {
		if err != nil {
			c.Stop()
		}
	}()
	for _, d := range []string{"logs", "pki", "etcd"} {
		if err := os.MkdirAll(filepath.Join(c.Dir, d), 0o700); err != nil {
			return nil, err
		}
	}
	for _, name := range []string{"etcd-client", "etcd-peer", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok"} {
		if c.ports[name], err = freePort(); err != nil {
			return nil, err
		}
	}
	if err := c.writeFiles(); err != nil {
		return nil, err
	}
	steps := []struct {
		name  string
		start func(context.Context) error
	}{
		{"etcd", c.startEtcd},
		{"kube-apiserver", c.startAPIServer},
		{"kube-controller-manager", c.startControllerManager},
		{"kube-scheduler", c.startScheduler},
		{"kwok", c.startKwok},
		{"nodes", c.createNodes},
	}
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

// Stop stops every manager and component, the last started first.
func (c *Cluster) Stop() {
	for _, m := range c.managers {
		m.Stop()
	}
	c.managers = nil
	for i := len(c.order) - 1; i >= 0; i-- {
		c.stopProcess(c.order[i])
	}
	c.order = nil
}

// RestartAPIServer stops kube-apiserver and starts it again on the same port.
func (c *Cluster) RestartAPIServer(ctx context.Context) error {
	c.stopProcess("kube-apiserver")
	return c.startAPIServer(ctx)
}

func (c *Cluster) writeFiles() error {
	tokens := fmt.Sprintf("%s,admin,admin,system:masters\n%s,%s,operator,system:serviceaccounts\n", adminToken, operatorToken, OperatorUser)
	if err := os.WriteFile(filepath.Join(c.Dir, "pki", "tokens.csv"), []byte(tokens), 0o600); err != nil {
		return err
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(c.Dir, "pki", "sa.key"), pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}), 0o600); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(c.Dir, "pki", "sa.pub"), pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}), 0o600); err != nil {
		return err
	}
	server := fmt.Sprintf("https://127.0.0.1:%d", c.ports["kube-apiserver"])
	c.Config = &rest.Config{Host: server, BearerToken: adminToken, TLSClientConfig: rest.TLSClientConfig{Insecure: true}, QPS: 200, Burst: 400}
	c.Kubeconfig = filepath.Join(c.Dir, "kubeconfig")
	c.OperatorKubeconfig = filepath.Join(c.Dir, "operator.kubeconfig")
	if err := writeKubeconfig(c.Kubeconfig, server, "admin", adminToken); err != nil {
		return err
	}
	return writeKubeconfig(c.OperatorKubeconfig, server, "mysql-operator", operatorToken)
}

func writeKubeconfig(path, server, user, token string) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["local"] = &clientcmdapi.Cluster{Server: server, InsecureSkipTLSVerify: true}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts["local"] = &clientcmdapi.Context{Cluster: "local", AuthInfo: user}
	cfg.CurrentContext = "local"
	return clientcmd.WriteToFile(*cfg, path)
}

func (c *Cluster) startEtcd(ctx context.Context) error {
	client := fmt.Sprintf("http://127.0.0.1:%d", c.ports["etcd-client"])
	peer := fmt.Sprintf("http://127.0.0.1:%d", c.ports["etcd-peer"])
	if err := c.startProcess("etcd", "etcd",
		"--name=default", "--data-dir="+filepath.Join(c.Dir, "etcd"),
		"--listen-client-urls="+client, "--advertise-client-urls="+client,
		"--listen-peer-urls="+peer, "--initial-advertise-peer-urls="+peer,
		"--initial-cluster=default="+peer, "--unsafe-no-fsync=true", "--log-level=warn"); err != nil {
		return err
	}
	return c.waitHTTP(ctx, c.procs["etcd"], client+"/health", nil)
}

func (c *Cluster) startAPIServer(ctx context.Context) error {
	pki := filepath.Join(c.Dir, "pki")
	if err := c.startProcess("kube-apiserver", "kube-apiserver",
		"--etcd-servers="+fmt.Sprintf("http://127.0.0.1:%d", c.ports["etcd-client"]),
		"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
		"--secure-port="+strconv.Itoa(c.ports["kube-apiserver"]),
		"--cert-dir="+pki,
		"--token-auth-file="+filepath.Join(pki, "tokens.csv"),
		"--authorization-mode=RBAC",
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-key-file="+filepath.Join(pki, "sa.pub"),
		"--service-account-signing-key-file="+filepath.Join(pki, "sa.key"),
		"--service-cluster-ip-range=10.96.0.0/16",
		"--endpoint-reconciler-type=none",
		"--allow-privileged=true"); err != nil {
		return err
	}
	if err := c.waitHTTP(ctx, c.procs["kube-apiserver"], c.Config.Host+"/readyz", c.Config); err != nil {
		return err
	}
	cl, err := client.New(c.Config, client.Options{Scheme: testenv.Scheme})
	if err != nil {
		return err
	}
	c.Client = cl
	return nil
}

func (c *Cluster) startControllerManager(ctx context.Context) error {
	pki := filepath.Join(c.Dir, "pki")
	port := c.ports["kube-controller-manager"]
	if err := c.startProcess("kube-controller-manager", "kube-controller-manager",
		"--kubeconfig="+c.Kubeconfig, "--leader-elect=false", "--controllers=*",
		"--service-account-private-key-file="+filepath.Join(pki, "sa.key"),
		"--root-ca-file="+filepath.Join(pki, "apiserver.crt"),
		"--bind-address=127.0.0.1", "--secure-port="+strconv.Itoa(port),
		"--authentication-skip-lookup=true", "--authorization-always-allow-paths=/healthz",
		"--concurrent-statefulset-syncs=10", "--concurrent-gc-syncs=20"); err != nil {
		return err
	}
	return c.waitHTTP(ctx, c.procs["kube-controller-manager"], fmt.Sprintf("https://127.0.0.1:%d/healthz", port), nil)
}

func (c *Cluster) startScheduler(ctx context.Context) error {
	port := c.ports["kube-scheduler"]
	if err := c.startProcess("kube-scheduler", "kube-scheduler",
		"--kubeconfig="+c.Kubeconfig, "--leader-elect=false",
		"--bind-address=127.0.0.1", "--secure-port="+strconv.Itoa(port),
		"--authentication-skip-lookup=true", "--authorization-always-allow-paths=/healthz,/readyz,/livez"); err != nil {
		return err
	}
	return c.waitHTTP(ctx, c.procs["kube-scheduler"], fmt.Sprintf("https://127.0.0.1:%d/healthz", port), nil)
}

// startKwok runs KWOK with the node, pod and volume "fast" stages of its own
// module, read from the Go module cache where `go install` put them.
func (c *Cluster) startKwok(ctx context.Context) error {
	stages, err := kwokStageDir()
	if err != nil {
		return err
	}
	args := []string{"--kubeconfig=" + c.Kubeconfig,
		"--manage-nodes-with-annotation-selector=" + NodeAnnotation + "=fake",
		"--server-address=127.0.0.1:" + strconv.Itoa(c.ports["kwok"]),
		"--node-lease-duration-seconds=40"}
	for _, f := range []string{"node/fast/node-initialize.yaml", "node/heartbeat-with-lease/node-heartbeat-with-lease.yaml",
		"pod/fast/pod-ready.yaml", "pod/fast/pod-complete.yaml", "pod/fast/pod-delete.yaml",
		"volume/fast/pv-bind.yaml", "volume/fast/pv-delete.yaml", "volume/fast/pvc-provision.yaml", "volume/fast/pvc-delete.yaml"} {
		args = append(args, "--config="+filepath.Join(stages, f))
	}
	if err := c.startProcess("kwok", "kwok", args...); err != nil {
		return err
	}
	if err := c.applyFile(ctx, filepath.Join(stages, "volume", "fast", "storage-class.yaml")); err != nil {
		return err
	}
	// Volumes can grow, as on most clouds' StorageClasses.
	sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "kwok-volume"}}
	return c.Client.Patch(ctx, sc, client.RawPatch(types.MergePatchType, []byte(`{"allowVolumeExpansion":true}`)))
}

// kwokStageDir finds kustomize/stage of the kwok module in the module cache.
func kwokStageDir() (string, error) {
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMODCACHE: %w", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "sigs.k8s.io", "kwok@"+KwokVersion, "kustomize", "stage")
	if _, err := os.Stat(dir); err != nil {
		return "", fmt.Errorf("kwok stages not in the module cache (run `make control-plane`): %w", err)
	}
	return dir, nil
}

// KwokVersion is the kwok module whose binary and stages the cluster uses;
// the Makefile pins the same version.
const KwokVersion = "v0.8.0"

func (c *Cluster) createNodes(ctx context.Context) error {
	for i := range c.opts.Nodes {
		name := fmt.Sprintf("kwok-node-%d", i)
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Annotations: map[string]string{NodeAnnotation: "fake"},
			Labels:      map[string]string{"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64", "type": "kwok"},
		}, Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{}}}
		if err := c.Client.Create(ctx, node); client.IgnoreAlreadyExists(err) != nil {
			return err
		}
	}
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		nodes := &corev1.NodeList{}
		if err := c.Client.List(ctx, nodes); err != nil {
			return false, nil
		}
		ready := 0
		for _, n := range nodes.Items {
			for _, cond := range n.Status.Conditions {
				if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
					ready++
				}
			}
		}
		// The default ServiceAccount is what pods of the default namespace need.
		err := c.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "default"}, &corev1.ServiceAccount{})
		return ready == c.opts.Nodes && err == nil, client.IgnoreNotFound(err)
	})
}

func (c *Cluster) startProcess(name, binary string, args ...string) error {
	if !filepath.IsAbs(binary) {
		binary = filepath.Join(c.opts.Bin, binary)
	}
	p, err := launch(c.LogPath(name), binary, args...)
	if err != nil {
		return err
	}
	c.procs[name] = p
	if !slices.Contains(c.order, name) {
		c.order = append(c.order, name)
	}
	return nil
}

// launch starts binary in a process group of its own, logging to logPath;
// the process dies with the test binary.
func launch(logPath, binary string, args ...string) (*process, error) {
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(binary, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, err
	}
	p := &process{cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); logFile.Close(); close(p.done) }()
	return p, nil
}

func (c *Cluster) stopProcess(name string) {
	p := c.procs[name]
	if p == nil {
		return
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	}
	delete(c.procs, name)
}

// waitHTTP polls url until it answers 200, or the process p exits.
func (c *Cluster) waitHTTP(ctx context.Context, p *process, url string, cfg *rest.Config) error {
	if cfg == nil {
		cfg = &rest.Config{TLSClientConfig: rest.TLSClientConfig{Insecure: true}}
	}
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return err
	}
	httpClient.Timeout = 2 * time.Second
	var last error
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		if p != nil {
			select {
			case <-p.done:
				return false, fmt.Errorf("exited: %s", p.cmd.ProcessState)
			default:
			}
		}
		resp, err := httpClient.Get(url)
		if err != nil {
			last = err
			return false, nil
		}
		resp.Body.Close()
		last = fmt.Errorf("%s answered %s", url, resp.Status)
		return resp.StatusCode == 200, nil
	})
	if err != nil && last != nil {
		return fmt.Errorf("%w (last: %v)", err, last)
	}
	return err
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
