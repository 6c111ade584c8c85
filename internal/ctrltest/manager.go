package ctrltest

import (
	"context"
	"net/http"
	"slices"
	"sync"
	"testing"

	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/config"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/example/mysql-operator/internal/testenv"
)

// WriteCounter counts the mutating requests a manager sends, by method and path.
type WriteCounter struct {
	mu       sync.Mutex
	requests []string
}

// Wrap returns rt counting the mutating requests it sends.
func (w *WriteCounter) Wrap(rt http.RoundTripper) http.RoundTripper {
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

// Snapshot returns the mutating requests sent so far.
func (w *WriteCounter) Snapshot() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.requests...)
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// NewManager returns a manager with the cache options cacheOpts, running
// as the user bound only to the operator's generated RBAC, with no metrics
// or probe listeners; its mutating requests are counted in the returned
// WriteCounter. Several managers of one test binary may register the same
// controller names.
func (e *Env) NewManager(t *testing.T, cacheOpts cache.Options) (ctrl.Manager, *WriteCounter) {
	t.Helper()
	cfg := e.OperatorConfig(t)
	writes := &WriteCounter{}
	cfg.WrapTransport = writes.Wrap
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 testenv.Scheme,
		Cache:                  cacheOpts,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	return mgr, writes
}

// Run starts mgr, whose controllers setup registers with ctx, until the
// returned stop function is called or the test ends.
func Run(t *testing.T, mgr ctrl.Manager, setup func(ctx context.Context) error) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	if err := setup(ctx); err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("manager: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// ReconcileCount sums controller-runtime's reconcile counters of the
// named controllers.
func ReconcileCount(t *testing.T, controllers ...string) float64 {
	t.Helper()
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, f := range families {
		if f.GetName() != "controller_runtime_reconcile_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "controller" && slices.Contains(controllers, l.GetValue()) {
					sum += m.GetCounter().GetValue()
				}
			}
		}
	}
	return sum
}
