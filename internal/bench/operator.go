package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/example/mysql-operator/internal/cluster"
)

var reconcileLabels = map[string]string{"controller": "mysql"}

// idleProfile is how long the idle manager's allocations are profiled.
const idleProfile = 15 * time.Second

// reconcileTotal counts the manager's reconciles, and allocTotal the bytes
// its heap has allocated since it started.
const (
	reconcileTotal = "controller_runtime_reconcile_total"
	allocTotal     = "go_memstats_alloc_bytes_total"
)

// operatorRun is one measurement of the manager: its cluster, its
// progress watch and the figures it fills in.
type operatorRun struct {
	n    int
	opts Options
	log  func(string, ...any)
	res  *Result
	c    *cluster.Cluster
	p    *progress
	mgr  *cluster.Manager
	prof profiler
}

// measureOperator runs the manager on a fresh cluster and takes every
// figure but the floor, phase by phase: converge, idle (a restart, then
// the window), the reactions, and one change of every MySQL.
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
	r := &operatorRun{n: n, opts: opts, log: log, res: res, c: c, p: p}
	emptyHeap, err := r.startManager(ctx)
	if err != nil {
		return err
	}
	convergePeak, err := r.converge(ctx)
	if err != nil {
		return err
	}
	if err := r.idle(ctx, emptyHeap); err != nil {
		return err
	}
	restartPeak, err := measureReaction(ctx, c, r.mgr, n, log, res)
	if err != nil {
		return err
	}
	if err := r.change(ctx); err != nil {
		return err
	}
	changePeak, _, err := r.mgr.Memory()
	if err != nil {
		return err
	}
	res.PeakRSS = max(changePeak, convergePeak, restartPeak)
	log("memory: peak RSS %.1f MiB: %.1f converging, %.1f restarted for the idle window and the reaction, %.1f restarted for the resync and the change",
		mib(res.PeakRSS), mib(convergePeak), mib(restartPeak), mib(changePeak))
	return nil
}

// startManager starts one manager, with no leader election, so that every
// write it sends is the operator's work, and returns its live heap once it
// watches, with no MySQL.
func (r *operatorRun) startManager(ctx context.Context) (uint64, error) {
	bin := r.opts.ManagerBin
	if bin == "" {
		var err error
		if bin, err = cluster.BuildManager(r.c.Dir); err != nil {
			return 0, err
		}
	}
	var env []string
	if r.opts.MemoryLimit > 0 {
		env = []string{fmt.Sprintf("GOMEMLIMIT=%d", r.opts.MemoryLimit*9/10)}
	}
	r.res.MemoryLimit = r.opts.MemoryLimit
	mgr, err := r.c.StartManagerEnv(ctx, "manager", bin, env, "--max-concurrent-reconciles=4")
	if err != nil {
		return 0, err
	}
	r.mgr, r.prof = mgr, profiler{dir: r.opts.ProfileDir, n: r.n, mgr: mgr}
	if err := waitWatching(ctx, mgr); err != nil {
		return 0, err
	}
	emptyHeap, err := mgr.LiveHeap()
	if err != nil {
		return 0, err
	}
	_, r.res.EmptyRSS, err = mgr.Memory()
	return emptyHeap, err
}

// converge creates N MySQLs at once and waits until every one is Current;
// it returns the manager's peak RSS so far.
func (r *operatorRun) converge(ctx context.Context) (uint64, error) {
	r.log("converge: creating %d MySQLs", r.n)
	cpuDone := r.prof.cpu("cpu-converge", time.Minute)
	work := controlPlaneWork(r.c, r.n)
	apiProfile := profileAPIServer(ctx, r.c, r.opts.ProfileDir, "apiserver-cpu-converge", r.n)
	cpu, begin := r.c.CPU(), time.Now()
	if err := parallel(r.n, func(i int) error { return r.c.Client.Create(ctx, mysqlSpec(i)) }); err != nil {
		return 0, err
	}
	if err := r.p.waitMySQLs(ctx, r.n, r.opts.Timeout, r.log); err != nil {
		return 0, fmt.Errorf("converge: %w (manager log: %s)", err, r.c.LogPath("manager"))
	}
	r.res.Converge = time.Since(begin)
	r.log("converge: %s; %s", cpuUsed(r.c.CPU().Since(cpu), r.res.Converge), schedulingAttempts(r.c))
	r.log("converge: %s", work())
	if err := errors.Join(<-cpuDone, <-apiProfile, r.prof.save("allocs-converge", "allocs")); err != nil {
		return 0, err
	}
	converged, err := r.mgr.Metrics()
	if err != nil {
		return 0, err
	}
	res := r.res
	res.ConvergeRequests, res.ConvergeThrottle = perMySQL(nil, requests(converged, true), r.n), throttled(converged)
	peak, _, err := r.mgr.Memory()
	r.log("converge: %s (floor %s, ratio %.2f); per MySQL %s; rate limiter wait %s; peak RSS %.1f MiB",
		res.Converge.Round(10*time.Millisecond), res.Floor.Round(10*time.Millisecond), res.Ratio(),
		Describe(res.ConvergeRequests), res.ConvergeThrottle.Round(time.Millisecond), mib(peak))
	return peak, err
}

// idle measures the steady state. A crash-restart of the manager is a
// forced resync of every object from a cold cache; the window starts with
// it. What the manager allocates per periodic check is measured from the
// end of the resync to the end of the window.
func (r *operatorRun) idle(ctx context.Context, emptyHeap uint64) error {
	r.log("steady state: restarting the manager, then idle for %s", r.opts.Window)
	r.mgr.Crash()
	windowEnd := time.Now().Add(r.opts.Window)
	if err := waitReconciled(ctx, r.mgr, float64(r.n), r.opts.Timeout); err != nil {
		return fmt.Errorf("resync: %w (manager log: %s)", err, r.c.LogPath("manager"))
	}
	resynced, err := r.mgr.Metrics()
	if err != nil {
		return err
	}
	time.Sleep(time.Until(windowEnd)) // the idle window itself is what is measured
	idle, err := r.mgr.Metrics()
	if err != nil {
		return err
	}
	res := r.res
	res.SteadyWrites = total(requests(idle, true))
	res.SteadyDirectReads = requests(idle, false)["get secrets"] + requests(idle, false)["get mysqls"]
	res.IdleChecks = idle.Sum(reconcileTotal, reconcileLabels) - resynced.Sum(reconcileTotal, reconcileLabels)
	if res.IdleChecks > 0 {
		res.AllocPerCheck = (idle.Sum(allocTotal, nil) - resynced.Sum(allocTotal, nil)) / res.IdleChecks
	}
	if res.HeapIdle, err = r.mgr.LiveHeap(); err != nil {
		return err
	}
	res.HeapPerMySQL = (float64(res.HeapIdle) - float64(emptyHeap)) / float64(r.n)
	r.log("steady state: %.0f writes (%s), %.0f direct reads; %s allocated per idle check; live heap %.1f MiB",
		res.SteadyWrites, Describe(requests(idle, true)), res.SteadyDirectReads, allocPerCheck(*res), mib(res.HeapIdle))
	// After the window, so that the figures above leave out the profiler's
	// own allocations. heap-idle is what the live heap holds, after a
	// forced collection.
	return errors.Join(r.prof.save("allocs-idle", fmt.Sprintf("allocs?seconds=%d", idleProfile/time.Second)),
		r.prof.save("allocs-resync", "allocs"), r.prof.save("heap-idle", "heap?gc=1"))
}

// change scales every MySQL from 1 to 2 replicas and measures what that
// costs, from the counters of the manager restarted by the idle phase once
// the reactions' own changes have converged, so that none of their status
// writes is counted as the change's.
func (r *operatorRun) change(ctx context.Context) error {
	if err := r.p.waitMySQLs(ctx, r.n, r.opts.Timeout, r.log); err != nil {
		return fmt.Errorf("after the reaction: %w", err)
	}
	idle, err := r.mgr.Metrics()
	if err != nil {
		return err
	}
	before := requests(idle, true)
	r.log("change: scaling every MySQL to 2 replicas")
	begin := time.Now()
	if err := parallel(r.n, func(i int) error {
		m := mysqlSpec(i)
		return r.c.Client.Patch(ctx, m, client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"replicas":2}}`)))
	}); err != nil {
		return err
	}
	// The patch raised every generation, so kstatus says InProgress until
	// the operator has observed it: a Current from before cannot be mistaken.
	if err := r.p.waitMySQLs(ctx, r.n, r.opts.Timeout, r.log); err != nil {
		return fmt.Errorf("change: %w", err)
	}
	res := r.res
	res.Change = time.Since(begin)
	after, err := r.mgr.Metrics()
	if err != nil {
		return err
	}
	res.ChangeRequests = perMySQL(before, requests(after, true), r.n)
	r.log("change: all Current again after %s; per MySQL %s", res.Change.Round(10*time.Millisecond), Describe(res.ChangeRequests))
	res.ReconcileP50 = after.Quantile("controller_runtime_reconcile_time_seconds", reconcileLabels, 0.5)
	res.ReconcileP99 = after.Quantile("controller_runtime_reconcile_time_seconds", reconcileLabels, 0.99)
	res.QueueP99 = after.Quantile("workqueue_queue_duration_seconds", map[string]string{"name": "mysql"}, 0.99)
	return nil
}

// waitReconciled waits until the manager has reconciled at least n times
// since it started.
func waitReconciled(ctx context.Context, mgr *cluster.Manager, n float64, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if ms, err := mgr.Metrics(); err == nil && ms.Sum(reconcileTotal, reconcileLabels) >= n {
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
	return saveProfile(p.dir, name, p.n, func(w io.Writer) error { return p.mgr.Profile(query, w) })
}

// saveProfile writes what get gives to <dir>/<name>-<n>.pb.gz; with no dir
// it saves nothing.
func saveProfile(dir, name string, n int, get func(io.Writer) error) error {
	if dir == "" {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, fmt.Sprintf("%s-%d.pb.gz", name, n)))
	if err != nil {
		return err
	}
	return errors.Join(get(f), f.Close())
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

// schedulingAttempts says how many times kube-scheduler tried to schedule
// a pod on c, by result: the scheduler's share of the CPU varies the most
// between runs, and a pod tried again is work the floor may not have had.
func schedulingAttempts(c *cluster.Cluster) string {
	a, err := c.SchedulingAttempts()
	if err != nil {
		return err.Error()
	}
	return fmt.Sprintf("kube-scheduler attempts: %.0f scheduled, %.0f unschedulable, %.0f errors", a["scheduled"], a["unschedulable"], a["error"])
}

// cpuUsed says what CPU time each process used in d, and what the
// machine had: where the time of a phase went.
func cpuUsed(used cluster.CPU, d time.Duration) string {
	return fmt.Sprintf("CPU time %s of %.0fs (%d cores)", used, d.Seconds()*float64(runtime.NumCPU()), runtime.NumCPU())
}

// profileAPIServer saves, in the background, a CPU profile of
// kube-apiserver over the minute that begins two minutes from now, to
// <dir>/<name>-<n>.pb.gz when dir is set: in a converge of 1000 or more,
// the queues are deep by then. The channel gives its outcome.
func profileAPIServer(ctx context.Context, c *cluster.Cluster, dir, name string, n int) <-chan error {
	done := make(chan error, 1)
	if dir == "" {
		done <- nil
		return done
	}
	go func() {
		select {
		case <-ctx.Done():
			done <- ctx.Err()
			return
		case <-time.After(2 * time.Minute):
		}
		done <- saveProfile(dir, name, n, func(w io.Writer) error { return c.APIServerProfile("profile?seconds=60", w) })
	}()
	return done
}
