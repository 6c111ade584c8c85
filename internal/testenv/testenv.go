// Package testenv starts a real kube-apiserver and etcd for integration
// tests, from the binaries `make control-plane` builds into bin/, with the
// operator's CRD installed.
package testenv

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	databasev1 "github.com/example/mysql-operator/api/v1"
)

// Scheme knows the built-in kinds, CRDs and the MySQL API.
var Scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(databasev1.AddToScheme(s))
	utilruntime.Must(apiextensionsv1.AddToScheme(s))
	return s
}()

// RepoRoot returns the root of the repository, found by walking up from the
// working directory to the go.mod of the module.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

// BinDir returns the directory of the control-plane binaries:
// KUBEBUILDER_ASSETS when set, else the repository's bin/.
func BinDir() (string, error) {
	if d := os.Getenv("KUBEBUILDER_ASSETS"); d != "" {
		return d, nil
	}
	root, err := RepoRoot()
	return filepath.Join(root, "bin"), err
}

// Env is a running envtest control plane.
type Env struct {
	*envtest.Environment
	// Config is the admin (system:masters) config.
	Config *rest.Config
	// Client is an uncached admin client.
	Client client.Client
	// Bin is the directory of the control-plane binaries.
	Bin string
}

// New starts etcd and kube-apiserver with the CRDs of kustomize/crd/bases
// installed. The caller stops it. It fails when the binaries are missing:
// run `make control-plane`.
func New() (*Env, error) {
	bin, err := BinDir()
	if err != nil {
		return nil, err
	}
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(bin, "kube-apiserver")); err != nil {
		return nil, fmt.Errorf("kube-apiserver not found in %s: run `make control-plane`", bin)
	}
	env := &envtest.Environment{
		BinaryAssetsDirectory: bin,
		CRDDirectoryPaths:     []string{filepath.Join(root, "kustomize", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
		Scheme:                Scheme,
	}
	cfg, err := env.Start()
	if err != nil {
		return nil, fmt.Errorf("start envtest: %w", err)
	}
	// Tests poll; the default client-side rate limit would slow them down.
	cfg.QPS, cfg.Burst = 500, 1000
	c, err := client.New(cfg, client.Options{Scheme: Scheme})
	if err != nil {
		_ = env.Stop()
		return nil, err
	}
	return &Env{Environment: env, Config: cfg, Client: c, Bin: bin}, nil
}

// Start is New for one test: it stops the control plane when the test ends.
func Start(t testing.TB) *Env {
	t.Helper()
	env, err := New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Logf("stop envtest: %v", err)
		}
	})
	return env
}

// Main is the TestMain of a package whose tests share one control plane:
// it starts it, hands it to set, runs the tests, stops it and exits.
func Main(m *testing.M, set func(*Env)) {
	env, err := New()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	set(env)
	code := m.Run()
	if err := env.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stop envtest:", err)
	}
	os.Exit(code)
}

// Kubeconfig writes a kubeconfig of a user in the system:masters group to a
// temporary file of the test and returns its path.
func (e *Env) Kubeconfig(t testing.TB) string {
	t.Helper()
	user, err := e.AddUser(envtest.User{Name: "admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	data, err := user.KubeConfig()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// OperatorConfig returns a new config of the operator's ServiceAccount user,
// bound only to the generated ClusterRole and Role of kustomize/rbac, so
// that tests fail when an RBAC marker is missing: envtest's admin user
// would bypass RBAC.
func (e *Env) OperatorConfig(t testing.TB) *rest.Config {
	t.Helper()
	ctx := context.Background()
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, "kustomize", "rbac", "role.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "mysql-operator-system"}}
	if err := client.IgnoreAlreadyExists(e.Client.Create(ctx, ns)); err != nil {
		t.Fatal(err)
	}
	const user = "system:serviceaccount:mysql-operator-system:mysql-operator"
	objs, err := DecodeObjects(data)
	if err != nil {
		t.Fatalf("kustomize/rbac/role.yaml: %v", err)
	}
	for _, u := range objs {
		if err := client.IgnoreAlreadyExists(e.Client.Create(ctx, u)); err != nil {
			t.Fatal(err)
		}
		subject := rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}
		roleRef := rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: u.GetKind(), Name: u.GetName()}
		var binding client.Object = &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: u.GetName()}, Subjects: []rbacv1.Subject{subject}, RoleRef: roleRef}
		if u.GetKind() == "Role" {
			binding = &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: u.GetName(), Namespace: u.GetNamespace()}, Subjects: []rbacv1.Subject{subject}, RoleRef: roleRef}
		}
		if err := client.IgnoreAlreadyExists(e.Client.Create(ctx, binding)); err != nil {
			t.Fatal(err)
		}
	}
	au, err := e.AddUser(envtest.User{Name: user}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return rest.CopyConfig(au.Config())
}
