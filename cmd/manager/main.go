// Command manager runs the mysql-operator: a controller-runtime manager with
// the MySQL reconciler, metrics behind authentication and authorization,
// health probes and optional leader election.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime/debug"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/KimMachineGun/automemlimit/memlimit"
	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/controller"
	"github.com/example/mysql-operator/internal/apimetrics"
	"github.com/example/mysql-operator/internal/metricsauth"
)

// gcPercent is the manager's GOGC unless the environment sets one: how much
// the heap may grow over what the last collection left live, in percent.
const gcPercent = 50

func main() {
	var (
		metricsAddr, probeAddr, pprofAddr, leaderElectionNamespace string
		leaderElect, secureMetrics                                 bool
		maxConcurrent, apiBurst                                    int
		apiQPS                                                     float64
		progressInterval                                           time.Duration
		agentImage                                                 string
		checkInterval, failoverGrace, maxLag, stallAfter           time.Duration
		driftInterval                                              time.Duration
		watchSelector                                              string
	)
	flag.StringVar(&metricsAddr, "metrics-bind-address", ":8443", "Address of the metrics endpoint; \"0\" turns it off.")
	flag.BoolVar(&secureMetrics, "metrics-secure", true, "Serve metrics over HTTPS, to authenticated and authorized clients only.")
	flag.StringVar(&probeAddr, "health-probe-bind-address", ":8081", "Address of the /healthz and /readyz probes.")
	flag.StringVar(&pprofAddr, "pprof-bind-address", "0", "Address of the Go pprof endpoints, for profiling the manager; \"0\" (the default) turns them off.")
	flag.BoolVar(&leaderElect, "leader-elect", false, "Elect a leader, so that only one replica reconciles.")
	flag.StringVar(&leaderElectionNamespace, "leader-election-namespace", "", "Namespace of the leader election Lease; defaults to the pod's namespace.")
	flag.IntVar(&maxConcurrent, "max-concurrent-reconciles", 4, "How many MySQLs reconcile at once.")
	flag.Float64Var(&apiQPS, "kube-api-qps", 50, "Requests per second the manager may send to the API server (Flux's default).")
	flag.IntVar(&apiBurst, "kube-api-burst", 300, "Burst of requests the manager may send to the API server (Flux's default).")
	flag.DurationVar(&progressInterval, "status-progress-interval", controller.DefaultProgressInterval,
		"Least time between two status writes of a MySQL that stays in progress; Ready and Stalled are written at once. 0 writes every change.")
	flag.StringVar(&agentImage, "agent-image", "",
		"Image the database pods copy the agent from; empty means the manager's own image, read from its pod (POD_NAME, POD_NAMESPACE).")
	flag.DurationVar(&checkInterval, "check-interval", controller.DefaultCheckInterval,
		"How often the servers of an idle MySQL are checked (one status query per server).")
	flag.DurationVar(&failoverGrace, "failover-grace", controller.DefaultFailoverGrace,
		"How long a primary may be unreachable before the operator fails over.")
	flag.DurationVar(&maxLag, "max-lag", controller.DefaultMaxLag, "Replication lag above which a replica is not ready.")
	flag.DurationVar(&stallAfter, "stall-after", controller.DefaultStallAfter,
		"How long a pod may stay unschedulable, unable to pull its image or crash-looping before its MySQL is Stalled.")
	flag.DurationVar(&driftInterval, "drift-interval", controller.DefaultDriftInterval,
		"How often each MySQLDatabase, MySQLUser and MySQLGrant is compared with its server when nothing else happens: a manual change on the server is undone within it.")
	flag.StringVar(&watchSelector, "watch-label-selector", "",
		"Reconcile only the MySQLs, databases, users and grants this label selector selects (Flux's sharding convention: "+
			"sharding.fluxcd.io/key=shard1 on a shard, '!sharding.fluxcd.io/key' on the main manager); each selector elects its own leader. Empty: all.")
	zapOpts := zap.Options{}
	zapOpts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))
	log := ctrl.Log.WithName("setup")
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

	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(databasev1.AddToScheme(scheme))

	metricsOpts := metricsserver.Options{BindAddress: metricsAddr, SecureServing: secureMetrics}
	if secureMetrics {
		metricsOpts.FilterProvider = metricsauth.Filter
	}
	shard, err := labels.Parse(watchSelector)
	if err != nil {
		log.Error(err, "parse --watch-label-selector")
		os.Exit(1)
	}
	// How long requests wait for the client-side rate limiter
	// (--kube-api-qps): the sign that one manager has reached its limit.
	crmetrics.RegisterRESTClientMetrics(crmetrics.MetricRateLimiterLatency)
	cfg := ctrl.GetConfigOrDie()
	cfg.WrapTransport = apimetrics.WrapTransport
	cfg.QPS, cfg.Burst = float32(apiQPS), apiBurst
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                        scheme,
		Cache:                         controller.CacheOptions(shard),
		Metrics:                       metricsOpts,
		HealthProbeBindAddress:        probeAddr,
		PprofBindAddress:              pprofAddr,
		LeaderElection:                leaderElect,
		LeaderElectionID:              controller.LeaderElectionID(shard),
		LeaderElectionNamespace:       leaderElectionNamespace,
		LeaderElectionReleaseOnCancel: true,
	})
	if err != nil {
		log.Error(err, "create manager")
		os.Exit(1)
	}
	ctx := ctrl.SetupSignalHandler()
	if agentImage == "" {
		if agentImage, err = ownImage(ctx, mgr.GetAPIReader()); err != nil {
			log.Error(err, "find the agent image: pass --agent-image")
			os.Exit(1)
		}
	}
	r := &controller.Reconciler{
		Client:                  mgr.GetClient(),
		APIReader:               mgr.GetAPIReader(),
		Recorder:                mgr.GetEventRecorder(controller.FieldManager),
		MaxConcurrentReconciles: maxConcurrent,
		ProgressInterval:        progressInterval,
		AgentImage:              agentImage,
		CheckInterval:           checkInterval,
		FailoverGrace:           failoverGrace,
		MaxLag:                  maxLag,
		StallAfter:              stallAfter,
	}
	if err := r.SetupWithManager(ctx, mgr); err != nil {
		log.Error(err, "set up controller", "controller", "mysql")
		os.Exit(1)
	}
	sqlObjects := &controller.SQLObjectsReconciler{
		Client:                  mgr.GetClient(),
		APIReader:               mgr.GetAPIReader(),
		Recorder:                mgr.GetEventRecorder(controller.FieldManager),
		MaxConcurrentReconciles: maxConcurrent,
		DriftInterval:           driftInterval,
	}
	if err := sqlObjects.SetupWithManager(ctx, mgr); err != nil {
		log.Error(err, "set up controllers", "controllers", "mysqldatabase, mysqluser, mysqlgrant")
		os.Exit(1)
	}
	utilruntime.Must(mgr.AddHealthzCheck("healthz", healthz.Ping))
	utilruntime.Must(mgr.AddReadyzCheck("readyz", healthz.Ping))
	log.Info("starting manager", "leaderElect", leaderElect, "watchLabelSelector", shard.String(), "maxConcurrentReconciles", maxConcurrent)
	if err := mgr.Start(ctx); err != nil {
		log.Error(err, "run manager")
		os.Exit(1)
	}
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
