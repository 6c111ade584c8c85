package controller

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/example/mysql-operator/internal/testenv"
	"go.uber.org/zap/zapcore"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/config"
)

// env is the control plane the envtest tests of this package share.
var env *testenv.Env

func TestMain(m *testing.M) {
	ctrl.SetLogger(zap.New(zap.UseDevMode(true), zap.WriteTo(os.Stderr), zap.Level(zapLevel())))
	klog.SetLogger(ctrl.Log)
	var err error
	env, err = testenv.New()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	if err := env.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stop envtest:", err)
	}
	os.Exit(code)
}

// writeCounter counts the mutating requests a manager sends, by method and path.
type writeCounter struct {
	mu       sync.Mutex
	requests []string
}

func (w *writeCounter) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		switch req.Method {
		case http.MethodGet, http.MethodHead, http.MethodOptions:
		default:
			w.mu.Lock()
			w.requests = append(w.requests, req.Method+" "+req.URL.Path)
			w.mu.Unlock()
		}
		return rt.RoundTrip(req)
	})
}

// snapshot returns the mutating requests sent so far.
func (w *writeCounter) snapshot() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.requests...)
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// operatorConfig returns a config of a user bound only to the generated
// ClusterRole and Role of kustomize/rbac, so that the tests fail when an
// RBAC marker is missing: envtest's admin user would bypass RBAC.
func operatorConfig(t *testing.T) *rest.Config {
	t.Helper()
	ctx := context.Background()
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, "kustomize", "rbac", "role.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "mysql-operator-system"}}
	if err := client.IgnoreAlreadyExists(env.Client.Create(ctx, ns)); err != nil {
		t.Fatal(err)
	}
	const user = "system:serviceaccount:mysql-operator-system:mysql-operator"
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			break
		}
		if len(u.Object) == 0 {
			continue
		}
		if err := client.IgnoreAlreadyExists(env.Client.Create(ctx, u)); err != nil {
			t.Fatal(err)
		}
		subject := rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}
		roleRef := rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: u.GetKind(), Name: u.GetName()}
		var binding client.Object = &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: u.GetName()}, Subjects: []rbacv1.Subject{subject}, RoleRef: roleRef}
		if u.GetKind() == "Role" {
			binding = &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: u.GetName(), Namespace: u.GetNamespace()}, Subjects: []rbacv1.Subject{subject}, RoleRef: roleRef}
		}
		if err := client.IgnoreAlreadyExists(env.Client.Create(ctx, binding)); err != nil {
			t.Fatal(err)
		}
	}
	au, err := env.AddUser(envtest.User{Name: user}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return au.Config()
}

// startManager runs the operator's manager, as the RBAC-restricted user, until
// the returned stop function is called or the test ends. Its mutating requests
// are counted in the returned writeCounter. The options change the
// reconciler before it starts; by default it writes every status change at once.
func startManager(t *testing.T, opts ...func(*Reconciler)) (*writeCounter, func()) {
	t.Helper()
	cfg := rest.CopyConfig(operatorConfig(t))
	writes := &writeCounter{}
	cfg.WrapTransport = writes.wrap
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 testenv.Scheme,
		Cache:                  CacheOptions(),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             ctrlConfig(),
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Recorder: mgr.GetEventRecorder(FieldManager), MaxConcurrentReconciles: 2}
	for _, opt := range opts {
		opt(r)
	}
	if err := r.SetupWithManager(ctx, mgr); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("manager: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return writes, stop
}

// eventually polls cond until it returns true or 30 seconds pass.
func eventually(t *testing.T, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	testenv.Eventually(t, 30*time.Second, what, cond)
}

// ctrlConfig lets several managers of the tests register the same controller name.
func ctrlConfig() config.Controller {
	return config.Controller{SkipNameValidation: ptr.To(true)}
}

// zapLevel is the test log level: info, or debug with TEST_DEBUG=1.
func zapLevel() zapcore.Level {
	if os.Getenv("TEST_DEBUG") != "" {
		return zapcore.DebugLevel
	}
	return zapcore.InfoLevel
}
