package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/example/mysql-operator/internal/cluster"
)

var reconcileLabels = map[string]string{"controller": "mysql"}

// measureOperator runs the manager on a fresh cluster and takes every
// figure but the floor.
func measureOperator(ctx context.Context, n int, opts Options, log func(string, ...any), res *Result) (err error) {
	c, err := startCluster(ctx)
	if err != nil {
		return err
	}
	defer func() { stopCluster(c, err, log) }()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	p, err := watchProgress(ctx, c)
	if err != nil {
		return err
	}
	bin := opts.ManagerBin
	if bin == "" {
		if bin, err = cluster.BuildManager(c.Dir); err != nil {
			return err
		}
	}
	// One manager, no leader election: every write it sends is the operator's work.
	var env []string
	if opts.MemoryLimit > 0 {
		env = []string{fmt.Sprintf("GOMEMLIMIT=%d", opts.MemoryLimit*9/10)}
	}
	res.MemoryLimit = opts.MemoryLimit
	mgr, err := c.StartManagerEnv(ctx, "manager", bin, env, "--max-concurrent-reconciles=4")
	if err != nil {
		return err
	}
	if err := waitWatching(ctx, mgr); err != nil {
		return err
	}
	emptyHeap, err := mgr.LiveHeap()
	if err != nil {
		return err
	}
	if _, res.EmptyRSS, err = mgr.Memory(); err != nil {
		return err
	}

	// Converge: N MySQLs created at once, until every one is Current.
	log("converge: creating %d MySQLs", n)
	prof := profiler{dir: opts.ProfileDir, n: n, mgr: mgr}
	cpuDone := prof.cpu("cpu-converge", time.Minute)
	begin := time.Now()
	if err := parallel(n, func(i int) error { return c.Client.Create(ctx, mysqlSpec(i)) }); err != nil {
		return err
	}
	if err := p.waitMySQLs(ctx, n, opts.Timeout, log); err != nil {
		return fmt.Errorf("converge: %w (manager log: %s)", err, c.LogPath("manager"))
	}
	res.Converge = time.Since(begin)
	if err := errors.Join(<-cpuDone, prof.save("allocs-converge", "allocs")); err != nil {
		return err
	}
	converged, err := mgr.Metrics()
	if err != nil {
		return err
	}
	res.ConvergeRequests, res.ConvergeThrottle = perMySQL(nil, requests(converged, true), n), throttled(converged)
	log("converge: %s (floor %s, ratio %.2f); per MySQL %s; rate limiter wait %s", res.Converge.Round(10*time.Millisecond),
		res.Floor.Round(10*time.Millisecond), res.Ratio(), Describe(res.ConvergeRequests), res.ConvergeThrottle.Round(time.Millisecond))

	// Steady state: a crash-restart of the manager is a forced resync of
	// every object from a cold cache; the window starts with it.
	convergePeak, _, err := mgr.Memory()
	if err != nil {
		return err
	}
	log("steady state: restarting the manager (peak RSS so far %.1f MiB), then idle for %s", mib(convergePeak), opts.Window)
	mgr.Crash()
	windowEnd := time.Now().Add(opts.Window)
	if err := waitReconciled(ctx, mgr, float64(n), opts.Timeout); err != nil {
		return fmt.Errorf("resync: %w (manager log: %s)", err, c.LogPath("manager"))
	}
	if d := time.Until(windowEnd); d > 0 {
		time.Sleep(d) // the idle window itself is what is measured
	}
	idle, err := mgr.Metrics()
	if err != nil {
		return err
	}
	res.SteadyWrites = total(requests(idle, true))
	res.SteadyDirectReads = requests(idle, false)["get secrets"] + requests(idle, false)["get mysqls"]
	if res.HeapIdle, err = mgr.LiveHeap(); err != nil {
		return err
	}
	res.HeapPerMySQL = (float64(res.HeapIdle) - float64(emptyHeap)) / float64(n)
	log("steady state: %.0f writes (%s), %.0f direct reads; live heap %.1f MiB", res.SteadyWrites, Describe(requests(idle, true)), res.SteadyDirectReads, mib(res.HeapIdle))

	if err := prof.save("allocs-resync", "allocs"); err != nil {
		return err
	}
	restartPeak, err := measureReaction(ctx, c, mgr, n, log, res)
	if err != nil {
		return err
	}
	// The change's baseline: the counters of the manager restarted there,
	// once the reaction's own changes have converged, so that none of their
	// status writes is counted as the change's.
	if err := p.waitMySQLs(ctx, n, opts.Timeout, log); err != nil {
		return fmt.Errorf("after the reaction: %w", err)
	}
	if idle, err = mgr.Metrics(); err != nil {
		return err
	}

	// Cost per change: spec.replicas 1 -> 2 on every MySQL.
	before := requests(idle, true)
	log("change: scaling every MySQL to 2 replicas")
	begin = time.Now()
	if err := parallel(n, func(i int) error {
		m := mysqlSpec(i)
		return c.Client.Patch(ctx, m, client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"replicas":2}}`)))
	}); err != nil {
		return err
	}
	// The patch raised every generation, so kstatus says InProgress until
	// the operator has observed it: a Current from before cannot be mistaken.
	if err := p.waitMySQLs(ctx, n, opts.Timeout, log); err != nil {
		return fmt.Errorf("change: %w", err)
	}
	res.Change = time.Since(begin)
	after, err := mgr.Metrics()
	if err != nil {
		return err
	}
	res.ChangeRequests = perMySQL(before, requests(after, true), n)
	log("change: all Current again after %s; per MySQL %s", res.Change.Round(10*time.Millisecond), Describe(res.ChangeRequests))

	res.ReconcileP50 = after.Quantile("controller_runtime_reconcile_time_seconds", reconcileLabels, 0.5)
	res.ReconcileP99 = after.Quantile("controller_runtime_reconcile_time_seconds", reconcileLabels, 0.99)
	res.QueueP99 = after.Quantile("workqueue_queue_duration_seconds", map[string]string{"name": "mysql"}, 0.99)
	if res.PeakRSS, _, err = mgr.Memory(); err != nil {
		return err
	}
	res.PeakRSS = max(res.PeakRSS, convergePeak, restartPeak)
	log("memory: peak RSS %.1f MiB", mib(res.PeakRSS))
	return nil
}

// waitReconciled waits until the manager has reconciled at least n times
// since it started.
func waitReconciled(ctx context.Context, mgr *cluster.Manager, n float64, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if ms, err := mgr.Metrics(); err == nil && ms.Sum("controller_runtime_reconcile_total", reconcileLabels) >= n {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	return fmt.Errorf("fewer than %.0f reconciles after %s", n, timeout)
}

// profiler saves the manager's Go profiles into dir, named by N; with no
// dir it saves nothing.
type profiler struct {
	dir string
	n   int
	mgr *cluster.Manager
}

// save writes the profile query (as /debug/pprof/ takes it) to
// <dir>/<name>-<n>.pb.gz.
func (p profiler) save(name, query string) error {
	if p.dir == "" {
		return nil
	}
	if err := os.MkdirAll(p.dir, 0o755); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(p.dir, fmt.Sprintf("%s-%d.pb.gz", name, p.n)))
	if err != nil {
		return err
	}
	return errors.Join(p.mgr.Profile(query, f), f.Close())
}

// cpu saves a CPU profile of the next d in the background; the channel
// gives its outcome.
func (p profiler) cpu(name string, d time.Duration) <-chan error {
	done := make(chan error, 1)
	go func() { done <- p.save(name, fmt.Sprintf("profile?seconds=%d", int(d.Seconds()))) }()
	return done
}

// watchedKinds are the resources whose watch shows that the manager's
// controllers have started: their event handlers are registered and the
// informers' initial lists are done.
var watchedKinds = []string{"mysqls", "statefulsets", "pods"}

// waitWatching waits until the manager watches MySQLs and their children.
// Its readiness probe answers before its controllers start, and a MySQL
// created before the controller's informer listed comes in its initial
// list, queued at low priority behind everything else: the converge would
// then measure the harness, not the manager, and the empty manager's memory
// would be that of a manager without caches.
func waitWatching(ctx context.Context, mgr *cluster.Manager) error {
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		ms, err := mgr.Metrics()
		if err != nil {
			return false, nil
		}
		watches := requests(ms, false)
		for _, r := range watchedKinds {
			if watches["watch "+r] < 1 {
				return false, nil
			}
		}
		return true, nil
	})
}
