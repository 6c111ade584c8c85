package cluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/example/mysql-operator/internal/testenv"
)

// FluxNamespace is where Flux's controllers run and its sources live.
const FluxNamespace = "flux-system"

// Flux's controllers, as named in bin/ (make flux) and in the cluster's
// logs.
const (
	SourceController    = "source-controller"
	KustomizeController = "kustomize-controller"
)

// Flux is Flux's source-controller and kustomize-controller running as
// processes against the cluster, each as a ServiceAccount of its own in
// FluxNamespace bound to cluster-admin, as Flux's own install binds them.
type Flux struct {
	c *Cluster
	// metrics are the controllers' metrics URLs, by controller.
	metrics map[string]string
}

// StartFlux installs Flux's CRDs from bin/flux-crds (make flux), starts
// source-controller with its artifact storage in the cluster's directory
// and its artifact server on loopback, then kustomize-controller, both
// watching every namespace, and waits for their readiness probes.
func (c *Cluster) StartFlux(ctx context.Context) (*Flux, error) {
	if err := c.installFluxCRDs(ctx); err != nil {
		return nil, err
	}
	if err := c.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: FluxNamespace}}); client.IgnoreAlreadyExists(err) != nil {
		return nil, fmt.Errorf("namespace %s: %w", FluxNamespace, err)
	}
	f := &Flux{c: c, metrics: map[string]string{}}
	storage, err := testenv.FreePort()
	if err != nil {
		return nil, err
	}
	storageDir := filepath.Join(c.Dir, "flux", "storage")
	if err := os.MkdirAll(storageDir, 0o700); err != nil {
		return nil, fmt.Errorf("flux storage: %w", err)
	}
	storageAddr := "127.0.0.1:" + strconv.Itoa(storage)
	if err := f.start(ctx, SourceController, "--storage-path="+storageDir,
		"--storage-addr="+storageAddr, "--storage-adv-addr="+storageAddr); err != nil {
		return nil, err
	}
	// A Kustomization waiting for another is looked at again every 5s
	// instead of 30s, so that a test does not wait on the timer.
	if err := f.start(ctx, KustomizeController, "--requeue-dependency=5s"); err != nil {
		return nil, err
	}
	return f, nil
}

// installFluxCRDs applies the CRDs of bin/flux-crds and waits until the
// API server serves them.
func (c *Cluster) installFluxCRDs(ctx context.Context) error {
	files, err := filepath.Glob(filepath.Join(c.opts.Bin, "flux-crds", "*.yaml"))
	if err != nil || len(files) == 0 {
		return fmt.Errorf("no Flux CRDs in %s (run `make flux`): %v", filepath.Join(c.opts.Bin, "flux-crds"), err)
	}
	for _, file := range files {
		if err := c.applyFile(ctx, file); err != nil {
			return fmt.Errorf("flux CRDs: %w", err)
		}
	}
	return c.waitCRDs(ctx)
}

// start runs one controller with a kubeconfig of its ServiceAccount,
// metrics and health probes on free loopback ports, and waits until it is
// ready.
func (f *Flux) start(ctx context.Context, name string, args ...string) error {
	kubeconfig, err := f.c.serviceAccountKubeconfig(ctx, FluxNamespace, name)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	metrics, err := testenv.FreePort()
	if err != nil {
		return err
	}
	health, err := testenv.FreePort()
	if err != nil {
		return err
	}
	args = append([]string{"--watch-all-namespaces=true", "--log-level=debug",
		"--metrics-addr=127.0.0.1:" + strconv.Itoa(metrics), "--health-addr=127.0.0.1:" + strconv.Itoa(health)}, args...)
	// Flux reads its kubeconfig from the environment; RUNTIME_NAMESPACE is
	// the namespace a controller believes it runs in.
	env := []string{"KUBECONFIG=" + kubeconfig, "RUNTIME_NAMESPACE=" + FluxNamespace}
	if err := f.c.startProcessEnv(name, env, name, args...); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	f.metrics[name] = "http://127.0.0.1:" + strconv.Itoa(metrics) + "/metrics"
	if err := waitHTTP(ctx, f.c.procs[name], "http://127.0.0.1:"+strconv.Itoa(health)+"/readyz", nil); err != nil {
		return fmt.Errorf("%s: %w (log: %s)", name, err, f.c.LogPath(name))
	}
	return nil
}

// serviceAccountKubeconfig makes the ServiceAccount ns/name, binds it to
// cluster-admin, and writes a kubeconfig with a day-long token of it.
func (c *Cluster) serviceAccountKubeconfig(ctx context.Context, ns, name string) (string, error) {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
	if err := c.Client.Create(ctx, sa); client.IgnoreAlreadyExists(err) != nil {
		return "", fmt.Errorf("service account: %w", err)
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: ns + ":" + name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: ns}},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
	}
	if err := c.Client.Create(ctx, binding); client.IgnoreAlreadyExists(err) != nil {
		return "", fmt.Errorf("cluster role binding: %w", err)
	}
	tr := &authnv1.TokenRequest{Spec: authnv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(24 * 3600))}}
	if err := c.Client.SubResource("token").Create(ctx, sa, tr); err != nil {
		return "", fmt.Errorf("token request: %w", err)
	}
	path := filepath.Join(c.Dir, name+".kubeconfig")
	if err := writeKubeconfig(path, c.Config.Host, name, tr.Status.Token); err != nil {
		return "", fmt.Errorf("kubeconfig: %w", err)
	}
	return path, nil
}

// Metrics scrapes the metrics of a Flux controller, SourceController or
// KustomizeController.
func (f *Flux) Metrics(controller string) (Metrics, error) {
	url, ok := f.metrics[controller]
	if !ok {
		return nil, fmt.Errorf("no Flux controller %q", controller)
	}
	return scrape(controller, url)
}

// Stop stops kustomize-controller, then source-controller. Whatever they
// applied stays: nothing is pruned once they are stopped.
func (f *Flux) Stop() {
	f.c.stopProcess(KustomizeController)
	f.c.stopProcess(SourceController)
}
