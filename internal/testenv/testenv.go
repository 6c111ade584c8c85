// Package testenv starts a real kube-apiserver and etcd for integration
// tests, from the binaries `make control-plane` builds into bin/, with the
// operator's CRD installed.
package testenv

import (
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	databasev1 "github.com/example/mysql-operator/api/v1"
)

// Scheme knows the built-in kinds and the MySQL API.
var Scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(databasev1.AddToScheme(s))
	return s
}()

// RepoRoot returns the root of the repository, found by walking up from the
// working directory to the go.mod of the module.
func RepoRoot(t testing.TB) string {
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the working directory")
		}
		dir = parent
	}
}

// BinDir returns the directory of the control-plane binaries:
// KUBEBUILDER_ASSETS when set, else the repository's bin/.
func BinDir(t testing.TB) string {
	if d := os.Getenv("KUBEBUILDER_ASSETS"); d != "" {
		return d
	}
	return filepath.Join(RepoRoot(t), "bin")
}

// Env is a running envtest control plane.
type Env struct {
	*envtest.Environment
	// Config is the admin (system:masters) config.
	Config *rest.Config
	// Client is an uncached admin client.
	Client client.Client
}

// Start starts etcd and kube-apiserver with the CRDs of kustomize/crd/bases
// installed, and stops them when the test ends. It fails the test when the
// binaries are missing: run `make control-plane`.
func Start(t testing.TB) *Env {
	t.Helper()
	bin := BinDir(t)
	if _, err := os.Stat(filepath.Join(bin, "kube-apiserver")); err != nil {
		t.Fatalf("kube-apiserver not found in %s: run `make control-plane`", bin)
	}
	env := &envtest.Environment{
		BinaryAssetsDirectory: bin,
		CRDDirectoryPaths:     []string{filepath.Join(RepoRoot(t), "kustomize", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
		Scheme:                Scheme,
	}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("start envtest: %v", err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Logf("stop envtest: %v", err)
		}
	})
	c, err := client.New(cfg, client.Options{Scheme: Scheme})
	if err != nil {
		t.Fatal(err)
	}
	return &Env{Environment: env, Config: cfg, Client: c}
}
