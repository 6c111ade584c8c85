// Package ctrltest holds what the envtest tests of the reconcilers share: a
// TestMain that starts the control plane, a manager running as the user
// bound only to the generated RBAC with its writes counted, the MySQLs of
// a test and the children's statuses that envtest's missing controllers
// would set, and a kubelet of real MariaDB servers for a MySQL's pods.
package ctrltest

import (
	"context"
	"os"
	"testing"
	"time"

	"go.uber.org/zap/zapcore"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/example/mysql-operator/internal/testenv"
)

// AgentImage is the agent image the tests' reconcilers put in pod templates.
const AgentImage = "registry.example.com/mysql-operator:v1"

// Env is the control plane the envtest tests of one package share.
type Env struct {
	*testenv.Env
}

// Main is the TestMain of a package of envtest tests: it sets the logger
// (debug with TEST_DEBUG=1), starts the control plane, hands it to set,
// runs the tests, stops it and exits.
func Main(m *testing.M, set func(*Env)) {
	ctrl.SetLogger(zap.New(zap.UseDevMode(true), zap.WriteTo(os.Stderr), zap.Level(zapLevel())))
	klog.SetLogger(ctrl.Log)
	testenv.Main(m, func(e *testenv.Env) { set(&Env{Env: e}) })
}

// zapLevel is the test log level: info, or debug with TEST_DEBUG=1.
func zapLevel() zapcore.Level {
	if os.Getenv("TEST_DEBUG") != "" {
		return zapcore.DebugLevel
	}
	return zapcore.InfoLevel
}

// Eventually polls cond until it returns true or 30 seconds pass.
func Eventually(t *testing.T, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	testenv.Eventually(t, 30*time.Second, what, cond)
}

// NewNamespace creates a namespace for one test.
func (e *Env) NewNamespace(t *testing.T) string { return testenv.NewNamespace(t, e.Client) }
