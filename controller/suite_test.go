package controller

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap/zapcore"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/example/mysql-operator/internal/testenv"
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

// startManager runs the operator's manager, as the RBAC-restricted user, until
// the returned stop function is called or the test ends. Its mutating requests
// are counted in the returned writeCounter. The options change the
// reconciler before it starts; by default it writes every status change at once.
func startManager(t *testing.T, opts ...func(*Reconciler)) (*writeCounter, func()) {
	t.Helper()
	return startManagerWith(t, CacheOptions(labels.Everything()), opts...)
}

// startManagerWith is startManager with the given cache options (a shard's).
func startManagerWith(t *testing.T, cacheOpts cache.Options, opts ...func(*Reconciler)) (*writeCounter, func()) {
	t.Helper()
	cfg := env.OperatorConfig(t)
	writes := &writeCounter{}
	cfg.WrapTransport = writes.wrap
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 testenv.Scheme,
		Cache:                  cacheOpts,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             ctrlConfig(),
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Recorder: mgr.GetEventRecorder(FieldManager), MaxConcurrentReconciles: 2,
		AgentImage: testAgentImage, CheckInterval: DefaultCheckInterval, FailoverGrace: DefaultFailoverGrace, MaxLag: DefaultMaxLag, StallAfter: DefaultStallAfter}
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
