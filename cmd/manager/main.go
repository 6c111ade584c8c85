// Command manager runs the mysql-operator: a controller-runtime manager with
// the operator's reconcilers (wired by package controller), metrics behind authentication and authorization,
// health probes and optional leader election.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime/debug"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/KimMachineGun/automemlimit/memlimit"
	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/controller"
	"github.com/example/mysql-operator/controller/apimetrics"
	"github.com/example/mysql-operator/controller/children"
	"github.com/example/mysql-operator/controller/lazylog"
	"github.com/example/mysql-operator/controller/metricsauth"
)

// gcPercent is the manager's GOGC unless the environment sets one: how much
// the heap may grow over what the last collection left live, in percent.
const gcPercent = 50

// options are the manager's command-line flags.
type options struct {
	metricsAddr, probeAddr, pprofAddr, leaderElectionNamespace string
	leaderElect, secureMetrics                                 bool
	apiBurst                                                   int
	apiQPS                                                     float64
	watchSelector                                              string
	// reconcilers are the reconcilers' settings, whose flags package
	// controller defines.
	reconcilers controller.Options
}

func main() {
	var o options
	o.bindFlags(flag.CommandLine)
	zapOpts := zap.Options{}
	zapOpts.BindFlags(flag.CommandLine)
	flag.Parse()
	// Lazy values: a reconcile's logger costs nothing until it writes.
	ctrl.SetLogger(lazylog.New(zap.New(zap.UseFlagOptions(&zapOpts))))
	log := ctrl.Log.WithName("setup")
	tuneMemory(log)
	if err := run(ctrl.SetupSignalHandler(), o, log); err != nil {
		log.Error(err, "manager stopped")
		os.Exit(1)
	}
}

// bindFlags defines the manager's flags on fs, with o holding their values.
func (o *options) bindFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.metricsAddr, "metrics-bind-address", ":8443", "Address of the metrics endpoint; \"0\" turns it off.")
	fs.BoolVar(&o.secureMetrics, "metrics-secure", true, "Serve metrics over HTTPS, to authenticated and authorized clients only.")
	fs.StringVar(&o.probeAddr, "health-probe-bind-address", ":8081", "Address of the /healthz and /readyz probes.")
	fs.StringVar(&o.pprofAddr, "pprof-bind-address", "0", "Address of the Go pprof endpoints, for profiling the manager; \"0\" (the default) turns them off.")
	fs.BoolVar(&o.leaderElect, "leader-elect", false, "Elect a leader, so that only one replica reconciles.")
	fs.StringVar(&o.leaderElectionNamespace, "leader-election-namespace", "", "Namespace of the leader election Lease; defaults to the pod's namespace.")
	fs.Float64Var(&o.apiQPS, "kube-api-qps", 50, "Requests per second the manager may send to the API server (Flux's default).")
	fs.IntVar(&o.apiBurst, "kube-api-burst", 300, "Burst of requests the manager may send to the API server (Flux's default).")
	o.reconcilers.BindFlags(fs)
	fs.StringVar(&o.watchSelector, "watch-label-selector", "",
		"Reconcile only the MySQLs, databases, users and grants this label selector selects (Flux's sharding convention: "+
			"sharding.fluxcd.io/key=shard1 on a shard, '!sharding.fluxcd.io/key' on the main manager); each selector elects its own leader. Empty: all.")
}

// tuneMemory sets the garbage collector's soft limit and target.
func tuneMemory(log logr.Logger) {
	// A soft memory limit at 90% of the container's (cgroup) memory limit,
	// unless GOMEMLIMIT is set: near it the garbage collector works harder
	// instead of the kernel killing the manager, and the heap's headroom
	// (GOGC) no longer doubles the peak.
	if limit, err := memlimit.Set(memlimit.WithRatio(0.9), memlimit.WithProvider(memlimit.FromCgroup)); err != nil {
		log.Info("no soft memory limit", "reason", err.Error())
	} else {
		log.Info("soft memory limit", "goMemLimitBytes", limit)
	}
	// Unless GOGC is set, the heap grows to 1.5 times what a collection
	// left live rather than twice: at 1000 MySQLs the idle checks keep the
	// collector busy for 1% of a core at the default, and the peak RSS was
	// more than twice the live heap plus the binary's 30 MiB.
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(gcPercent)
		log.Info("garbage collection target", "gcPercent", gcPercent)
	}
}

// run creates the manager and its controllers and runs them until ctx ends.
func run(ctx context.Context, o options, log logr.Logger) error {
	shard, err := labels.Parse(o.watchSelector)
	if err != nil {
		return fmt.Errorf("parse --watch-label-selector: %w", err)
	}
	mgr, err := newManager(o, shard)
	if err != nil {
		return err
	}
	if o.reconcilers.AgentImage == "" {
		if o.reconcilers.AgentImage, err = ownImage(ctx, mgr.GetAPIReader()); err != nil {
			return fmt.Errorf("find the agent image (pass --agent-image): %w", err)
		}
	}
	if err := controller.Setup(ctx, mgr, o.reconcilers); err != nil {
		return err
	}
	log.Info("starting manager", "leaderElect", o.leaderElect, "watchLabelSelector", shard.String(), "maxConcurrentReconciles", o.reconcilers.MaxConcurrentReconciles)
	if err := mgr.Start(ctx); err != nil {
		return fmt.Errorf("run manager: %w", err)
	}
	return nil
}

// newManager returns a manager whose caches and leader election are those
// of the shard, with metrics, health probes and the API client's limits.
func newManager(o options, shard labels.Selector) (manager.Manager, error) {
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(databasev1.AddToScheme(scheme))
	metricsOpts := metricsserver.Options{BindAddress: o.metricsAddr, SecureServing: o.secureMetrics}
	if o.secureMetrics {
		metricsOpts.FilterProvider = metricsauth.Filter
	}
	// How long requests wait for the client-side rate limiter
	// (--kube-api-qps): the sign that one manager has reached its limit.
	crmetrics.RegisterRESTClientMetrics(crmetrics.MetricRateLimiterLatency)
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return nil, fmt.Errorf("load the API server's configuration: %w", err)
	}
	cfg.WrapTransport = apimetrics.WrapTransport
	cfg.QPS, cfg.Burst = float32(o.apiQPS), o.apiBurst
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                        scheme,
		Cache:                         children.CacheOptions(shard),
		Metrics:                       metricsOpts,
		HealthProbeBindAddress:        o.probeAddr,
		PprofBindAddress:              o.pprofAddr,
		LeaderElection:                o.leaderElect,
		LeaderElectionID:              controller.LeaderElectionID(shard),
		LeaderElectionNamespace:       o.leaderElectionNamespace,
		LeaderElectionReleaseOnCancel: true,
	})
	if err != nil {
		return nil, fmt.Errorf("create manager: %w", err)
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return nil, fmt.Errorf("add healthz check: %w", err)
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return nil, fmt.Errorf("add readyz check: %w", err)
	}
	return mgr, nil
}

// ownImage returns the image of the manager's own container, read from its
// pod: the agent ships in the operator's image, so whatever a kustomize
// overlay or a Helm value sets the image to, the pods copy the agent of the
// same build.
func ownImage(ctx context.Context, r client.Reader) (string, error) {
	name, ns := os.Getenv("POD_NAME"), os.Getenv("POD_NAMESPACE")
	if name == "" || ns == "" {
		return "", errors.New("POD_NAME and POD_NAMESPACE are not set")
	}
	pod := &corev1.Pod{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, pod); err != nil {
		return "", fmt.Errorf("get own pod %s/%s: %w", ns, name, err)
	}
	for _, c := range pod.Spec.Containers {
		if c.Name == "manager" {
			return c.Image, nil
		}
	}
	return "", fmt.Errorf("pod %s/%s has no container named manager", ns, name)
}
