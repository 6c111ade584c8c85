package mysql

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/example/mysql-operator/controller/children"
	"github.com/example/mysql-operator/controller/dataplane"
	"github.com/example/mysql-operator/controller/vocabulary"
	"github.com/example/mysql-operator/internal/ctrltest"
)

// env is the control plane the envtest tests of this package share.
var env *ctrltest.Env

func TestMain(m *testing.M) { ctrltest.Main(m, func(e *ctrltest.Env) { env = e }) }

// startManager runs the operator's manager with the MySQL reconciler, as
// the RBAC-restricted user, until the returned stop function is called or
// the test ends. Its mutating requests are counted in the returned
// WriteCounter. The options change the reconciler before it starts; by
// default it writes every status change at once.
func startManager(t *testing.T, opts ...func(*Reconciler)) (*ctrltest.WriteCounter, func()) {
	t.Helper()
	mgr, writes := env.NewManager(t, children.CacheOptions(labels.Everything()))
	r := &Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Recorder: mgr.GetEventRecorder(vocabulary.FieldManager),
		MaxConcurrentReconciles: 2, AgentImage: ctrltest.AgentImage, CheckInterval: dataplane.DefaultCheckInterval,
		FailoverGrace: dataplane.DefaultFailoverGrace, MaxLag: dataplane.DefaultMaxLag, StallAfter: DefaultStallAfter}
	for _, opt := range opts {
		opt(r)
	}
	stop := ctrltest.Run(t, mgr, func(ctx context.Context) error { return r.SetupWithManager(ctx, mgr) })
	return writes, stop
}
