// Command manager runs the mysql-operator: a controller-runtime manager with
// the MySQL reconciler, metrics behind authentication and authorization,
// health probes and optional leader election.
package main

import (
	"flag"
	"os"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/controller"
	"github.com/example/mysql-operator/internal/apimetrics"
	"github.com/example/mysql-operator/internal/metricsauth"
)

func main() {
	var (
		metricsAddr, probeAddr, pprofAddr, leaderElectionNamespace string
		leaderElect, secureMetrics                                 bool
		maxConcurrent, apiBurst                                    int
		apiQPS                                                     float64
		progressInterval                                           time.Duration
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
	zapOpts := zap.Options{}
	zapOpts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))
	log := ctrl.Log.WithName("setup")

	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(databasev1.AddToScheme(scheme))

	metricsOpts := metricsserver.Options{BindAddress: metricsAddr, SecureServing: secureMetrics}
	if secureMetrics {
		metricsOpts.FilterProvider = metricsauth.Filter
	}
	cfg := ctrl.GetConfigOrDie()
	cfg.WrapTransport = apimetrics.WrapTransport
	cfg.QPS, cfg.Burst = float32(apiQPS), apiBurst
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                        scheme,
		Cache:                         controller.CacheOptions(),
		Metrics:                       metricsOpts,
		HealthProbeBindAddress:        probeAddr,
		PprofBindAddress:              pprofAddr,
		LeaderElection:                leaderElect,
		LeaderElectionID:              "mysql-operator.database.example.com",
		LeaderElectionNamespace:       leaderElectionNamespace,
		LeaderElectionReleaseOnCancel: true,
	})
	if err != nil {
		log.Error(err, "create manager")
		os.Exit(1)
	}
	ctx := ctrl.SetupSignalHandler()
	r := &controller.Reconciler{
		Client:                  mgr.GetClient(),
		APIReader:               mgr.GetAPIReader(),
		Recorder:                mgr.GetEventRecorder(controller.FieldManager),
		MaxConcurrentReconciles: maxConcurrent,
		ProgressInterval:        progressInterval,
	}
	if err := r.SetupWithManager(ctx, mgr); err != nil {
		log.Error(err, "set up controller", "controller", "mysql")
		os.Exit(1)
	}
	utilruntime.Must(mgr.AddHealthzCheck("healthz", healthz.Ping))
	utilruntime.Must(mgr.AddReadyzCheck("readyz", healthz.Ping))
	log.Info("starting manager", "leaderElect", leaderElect, "maxConcurrentReconciles", maxConcurrent)
	if err := mgr.Start(ctx); err != nil {
		log.Error(err, "run manager")
		os.Exit(1)
	}
}
