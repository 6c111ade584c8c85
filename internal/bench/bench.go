// Package bench measures what the operator costs on a full local cluster:
// time to converge N MySQLs against the floor of applying their children
// directly, API writes when idle and per change, memory, and reconcile
// latency. cmd/bench runs it and writes docs/benchmarks.md; a short run
// (N=5) is a test, so the benchmark never rots.
package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/controller/apimetrics"
	"github.com/example/mysql-operator/controller/children"
	"github.com/example/mysql-operator/controller/vocabulary"
	"github.com/example/mysql-operator/internal/cluster"
	"github.com/example/mysql-operator/internal/testenv"
)

// Options configure a benchmark run.
type Options struct {
	// Window is how long the steady-state window lasts.
	Window time.Duration
	// Timeout bounds each wait for convergence; zero is 10 minutes, or
	// 0.6 s per MySQL when that is longer.
	Timeout time.Duration
	// Progress receives a line per step.
	Progress io.Writer
	// ManagerBin is the manager binary; empty builds cmd/manager.
	ManagerBin string
	// MemoryLimit, when set, is the memory limit (bytes) of the container
	// the manager runs as if in: its soft limit, GOMEMLIMIT, is 90% of
	// it, what the manager derives from its cgroup in a pod.
	MemoryLimit int64
	// ProfileDir, when set, receives the manager's Go profiles (see
	// profiler), to find where the converge's time and memory go.
	ProfileDir string
}

// Result holds the figures of one N.
type Result struct {
	N                 int
	Converge, Floor   time.Duration
	ConvergeRequests  map[string]float64 // mutating verb/resource per MySQL, to converge
	ConvergeThrottle  time.Duration      // time requests waited for the client-side rate limiter while converging, summed
	SteadyWrites      float64            // mutating requests in the idle window, resync included
	SteadyDirectReads float64            // named GETs (reads that bypass the cache) in the idle window
	IdleChecks        float64            // periodic reconciles from the end of the resync to the end of the idle window
	AllocPerCheck     float64            // bytes the manager allocated in that time, per periodic reconcile
	ChangeRequests    map[string]float64 // mutating verb/resource per MySQL, for one spec.replicas change
	Change            time.Duration      // from the spec.replicas patches until every MySQL is Current again
	PeakRSS, HeapIdle uint64             // bytes: the higher VmHWM of the converging and the restarted manager; live heap at N idle MySQLs
	HeapPerMySQL      float64            // bytes of live heap per MySQL over the empty manager's
	EmptyRSS          uint64             // bytes resident in the manager with no MySQL, its caches synced (its code is most of it)
	MemoryLimit       int64              // bytes: Options.MemoryLimit, 0 for none
	ReconcileP50      time.Duration
	ReconcileP99      time.Duration
	QueueP99          time.Duration
	ReactionIdle      time.Duration // the slowest of single config changes to reach their StatefulSet, every other MySQL idle
	ReactionResync    time.Duration // the same, while the restarted manager resyncs every object
	ReactionInResync  bool          // whether the resync was still running after the last of those changes
	Took              time.Duration // the whole measurement of this N, floor included
}

// Ratio is converge time over the floor.
func (r Result) Ratio() float64 { return r.Converge.Seconds() / r.Floor.Seconds() }

const namespace = "bench"

// Run measures one N, each phase on a fresh local cluster.
func Run(ctx context.Context, n int, opts Options) (Result, error) {
	res := Result{N: n}
	begin := time.Now()
	if opts.Progress == nil {
		opts.Progress = io.Discard
	}
	if opts.Timeout == 0 {
		// At N=1000 the floor's applies alone take four and a half minutes.
		opts.Timeout = max(10*time.Minute, time.Duration(n)*600*time.Millisecond)
	}
	log := func(format string, args ...any) {
		fmt.Fprintf(opts.Progress, "[N=%d] "+format+"\n", append([]any{n}, args...)...)
	}
	floor, err := measureFloor(ctx, n, opts, log)
	if err != nil {
		return res, fmt.Errorf("floor: %w", err)
	}
	res.Floor = floor
	err = measureOperator(ctx, n, opts, log, &res)
	res.Took = time.Since(begin)
	log("took %s", res.Took.Round(time.Second))
	return res, err
}

// mysqlSpec is the MySQL every benchmark object gets.
func mysqlSpec(i int) *databasev1.MySQL {
	return &databasev1.MySQL{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("db-%04d", i), Namespace: namespace},
		Spec:       databasev1.MySQLSpec{Replicas: 1, Version: "8.4", StorageSize: "1Gi", VolumeDeletionPolicy: databasev1.VolumeRetain},
	}
}

// stopCluster stops a benchmark's cluster and removes its directory: its
// etcd data, the manager's binary and the logs, hundreds of megabytes at
// N=2000. When the phase failed, the directory is kept for its logs.
func stopCluster(c *cluster.Cluster, err error, log func(string, ...any)) {
	c.Stop()
	if err != nil {
		log("the failed phase's logs are kept in %s", filepath.Join(c.Dir, "logs"))
		return
	}
	if err := os.RemoveAll(c.Dir); err != nil {
		log("remove the cluster's directory: %v", err)
	}
}

// startCluster starts a fresh local cluster with the operator's CRDs and
// RBAC installed, and the benchmark's namespace.
func startCluster(ctx context.Context) (*cluster.Cluster, error) {
	c, err := cluster.Start(ctx, cluster.Options{})
	if err != nil {
		return nil, err
	}
	root, err := testenv.RepoRoot()
	if err == nil {
		err = c.InstallOperator(ctx, root, "bench")
	}
	if err != nil {
		c.Stop()
		return nil, err
	}
	return c, client.IgnoreAlreadyExists(c.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}))
}

// measureFloor applies the children the builders render for N MySQLs
// directly, one client in a tight loop, and waits for every StatefulSet to
// be Current with its pods ready: the same work and the same end point as
// the operator's, without a controller. Owner references are left out,
// since no parent exists for the garbage collector to find.
func measureFloor(ctx context.Context, n int, opts Options, log func(string, ...any)) (_ time.Duration, err error) {
	c, err := startCluster(ctx)
	if err != nil {
		return 0, err
	}
	defer func() { stopCluster(c, err, log) }()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	p, err := watchProgress(ctx, c)
	if err != nil {
		return 0, err
	}
	log("floor: applying the children of %d MySQLs directly", n)
	work := controlPlaneWork(c, n)
	apiProfile := profileAPIServer(ctx, c, opts.ProfileDir, "apiserver-cpu-floor", n)
	cpu, begin := c.CPU(), time.Now()
	for i := range n {
		m := mysqlSpec(i)
		secret := children.RootSecret(m, []byte("benchmark-password-not-secret"))
		secret.OwnerReferences = nil
		operator := children.OperatorSecret(m, map[string][]byte{"admin": []byte("a"), "replication": []byte("r"), "agent": []byte("g")})
		cm, headless, svc, sts := children.ConfigMap(m), children.HeadlessService(m), children.Service(m), children.StatefulSet(m, children.Agent{Image: cluster.AgentImage})
		primary, replicas := children.PrimaryService(m), children.ReplicasService(m)
		cm.OwnerReferences, headless.OwnerReferences, svc.OwnerReferences, sts.OwnerReferences = nil, nil, nil, nil
		primary.OwnerReferences, replicas.OwnerReferences, operator.OwnerReferences = nil, nil, nil
		for _, ac := range []runtime.ApplyConfiguration{secret, operator, cm, headless, svc, primary, replicas, sts} {
			if err := c.Client.Apply(ctx, ac, client.FieldOwner("bench-floor"), client.ForceOwnership); err != nil {
				return 0, err
			}
		}
	}
	log("floor: applied in %s", time.Since(begin).Round(10*time.Millisecond))
	err = p.waitStatefulSets(ctx, n, opts.Timeout, log)
	d := time.Since(begin)
	log("floor: %s; %s; %s", d.Round(10*time.Millisecond), cpuUsed(c.CPU().Since(cpu), d), schedulingAttempts(c))
	log("floor: %s", work())
	return d, errors.Join(err, <-apiProfile)
}

// converged says whether the operator has brought a MySQL's children to
// its generation: the MySQL is Current, or it observed its generation and
// waits only for the database (DatabaseProgressing), which is all a MySQL
// on KWOK nodes can reach: no server runs there.
func converged(u *unstructured.Unstructured) bool {
	if r, err := status.Compute(u); err == nil && r.Status == status.CurrentStatus {
		return true
	}
	observed, _, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
	if observed != u.GetGeneration() {
		return false
	}
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == databasev1.ConditionReconciling {
			return m["status"] == "True" && m["reason"] == vocabulary.ReasonDatabaseProgressing
		}
	}
	return false
}

// ticker returns a function that says true at most once every 30
// seconds: when to log how a wait progresses, to compare the shape of the
// converge with the floor's.
func ticker() func() bool {
	last := time.Now()
	return func() bool {
		if time.Since(last) < 30*time.Second {
			return false
		}
		last = time.Now()
		return true
	}
}

// parallel runs f for 0..n-1 on a few workers and returns the first error.
func parallel(n int, f func(i int) error) error {
	var g errgroup.Group
	g.SetLimit(8)
	for i := range n {
		g.Go(func() error { return f(i) })
	}
	return g.Wait()
}

// requests sums the operator's API requests by verb/resource, mutating or not.
func requests(ms cluster.Metrics, mutating bool) map[string]float64 {
	out := map[string]float64{}
	for _, m := range ms["mysql_operator_api_requests_total"].GetMetric() {
		var verb, resource string
		for _, l := range m.GetLabel() {
			switch l.GetName() {
			case "verb":
				verb = l.GetValue()
			case "resource":
				resource = l.GetValue()
			}
		}
		if apimetrics.Mutating(verb) == mutating {
			out[verb+" "+resource] += m.GetCounter().GetValue()
		}
	}
	return out
}

// controlPlaneWork reads the API server's writes and how long
// kube-controller-manager's requests have waited for its client-side rate
// limiter now, and returns a function that describes both since: per
// MySQL, what every client wrote (the controllers' and the scheduler's as
// well as the operator's), and whether the controllers' own request rate
// (--kube-api-qps, 20 by default) held them back.
func controlPlaneWork(c *cluster.Cluster, n int) func() string {
	writes, err := c.APIWrites()
	kcm, kerr := c.ComponentMetrics("kube-controller-manager")
	return func() string {
		if err := errors.Join(err, kerr); err != nil {
			return err.Error()
		}
		after, err := c.APIWrites()
		if err != nil {
			return err.Error()
		}
		kcmAfter, err := c.ComponentMetrics("kube-controller-manager")
		if err != nil {
			return err.Error()
		}
		return fmt.Sprintf("kube-controller-manager's requests waited %s in all for its client-side rate limiter; API server writes per MySQL, from every client: %s",
			(throttled(kcmAfter) - throttled(kcm)).Round(time.Second), Describe(perMySQL(writes, after, n)))
	}
}

// perMySQL divides the growth of each figure from before to after by n.
func perMySQL(before, after map[string]float64, n int) map[string]float64 {
	out := map[string]float64{}
	for k, v := range after {
		if d := v - before[k]; d > 0 {
			out[k] = d / float64(n)
		}
	}
	return out
}

// throttled is how long a component's requests waited for its client-side
// rate limiter (--kube-api-qps), summed over every request.
func throttled(ms cluster.Metrics) time.Duration {
	return time.Duration(ms.HistogramSum("rest_client_rate_limiter_duration_seconds", nil) * float64(time.Second))
}

func total(m map[string]float64) float64 {
	var t float64
	for _, v := range m {
		t += v
	}
	return t
}

// Describe lists a map of figures as "key: value" pairs, keys sorted.
func Describe(m map[string]float64) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s: %.2f", k, m[k]))
	}
	return strings.Join(parts, ", ")
}
