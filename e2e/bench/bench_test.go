// Package bench runs the benchmark of internal/bench at a small N, so that
// it never rots.
package bench

import (
	"context"
	"os"
	"testing"
	"time"

	"go.uber.org/zap/zapcore"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/example/mysql-operator/internal/bench"
)

// TestShortBenchmark runs the whole benchmark at N=5 with a short window, so
// that it never rots, and checks the figures that hold at any N. Speed and
// memory targets live in the full run (make bench), not here.
func TestShortBenchmark(t *testing.T) {
	// The benchmark's clients log only their errors, as cmd/bench's do.
	ctrl.SetLogger(zap.New(zap.Level(zapcore.ErrorLevel)))
	r, err := bench.Run(context.Background(), 5, bench.Options{Window: 5 * time.Second, Timeout: 3 * time.Minute, Progress: os.Stderr})
	if err != nil {
		t.Fatal(err)
	}
	if r.Converge <= 0 || r.Floor <= 0 || r.PeakRSS == 0 || r.HeapIdle == 0 || r.ReactionIdle <= 0 || r.ReactionResync <= 0 {
		t.Errorf("missing figures: %+v", r)
	}
	if r.SteadyWrites != 0 {
		t.Errorf("idle manager sent %.0f mutating requests through a resync, want 0", r.SteadyWrites)
	}
	if r.ChangeRequests["apply statefulsets"] != 1 || r.ChangeRequests["apply poddisruptionbudgets"] != 1 {
		t.Errorf("a replicas change should apply the StatefulSet once and create the PDB once per MySQL: %s", bench.Describe(r.ChangeRequests))
	}
	bench.Table(os.Stderr, []bench.Result{r})
}
