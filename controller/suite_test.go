package controller

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/example/mysql-operator/controller/children"
	"github.com/example/mysql-operator/controller/dataplane"
	"github.com/example/mysql-operator/controller/mysql"
	"github.com/example/mysql-operator/controller/sqlobjects"
	"github.com/example/mysql-operator/internal/ctrltest"
)

// env is the control plane the envtest tests of this package share.
var env *ctrltest.Env

func TestMain(m *testing.M) { ctrltest.Main(m, func(e *ctrltest.Env) { env = e }) }

// startManager runs a manager wired by Setup for the shard sel, as the
// RBAC-restricted user, writing every status change at once, until the
// test ends; its mutating requests are counted.
func startManager(t *testing.T, sel labels.Selector) *ctrltest.WriteCounter {
	t.Helper()
	mgr, writes := env.NewManager(t, children.CacheOptions(sel))
	o := Options{MaxConcurrentReconciles: 2, AgentImage: ctrltest.AgentImage, CheckInterval: dataplane.DefaultCheckInterval,
		FailoverGrace: dataplane.DefaultFailoverGrace, MaxLag: dataplane.DefaultMaxLag, StallAfter: mysql.DefaultStallAfter,
		DriftInterval: sqlobjects.DefaultDriftInterval}
	ctrltest.Run(t, mgr, func(ctx context.Context) error { return Setup(ctx, mgr, o) })
	return writes
}
