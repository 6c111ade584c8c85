// Package controller wires the operator's reconcilers into a manager: their
// settings and the flags that set them (Options), their setup (Setup), and
// the Lease of each shard (LeaderElectionID); the cache options come from
// the table of child kinds (children.CacheOptions).
//
// The packages below it, each with one concern:
//   - mysql: the MySQL reconciler; children applied and pruned, status
//     judged and written, work-queue priorities.
//   - dataplane: the servers observed, topology.Decide's step taken.
//   - sqlobjects: the MySQLDatabase, MySQLUser and MySQLGrant reconciler.
//   - backup: the MySQLBackup reconciler and the backup schedule.
//   - children: the pure builders of the children, their names, the table
//     of child kinds and what the cache keeps of each.
//   - vocabulary: labels, reasons, events; outcome: stalls and requeues.
//   - apimetrics, metricsauth, lazylog: the manager's API request
//     counter, the metrics endpoint's authorization, lazy log values.
//   - statusmetrics: each MySQL's metrics the agents cannot know (Ready,
//     errant instances, last failover and backup, certificate expiry).
//
// Imports run one way: controller -> mysql -> dataplane -> children ->
// {vocabulary, outcome}, and sqlobjects, backup -> children; each may import
// applyset, dbop, topology, agent and api, none of them a controller package.
package controller

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	ctrl "sigs.k8s.io/controller-runtime"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/example/mysql-operator/controller/backup"
	"github.com/example/mysql-operator/controller/dataplane"
	"github.com/example/mysql-operator/controller/mysql"
	"github.com/example/mysql-operator/controller/sqlobjects"
	"github.com/example/mysql-operator/controller/statusmetrics"
	"github.com/example/mysql-operator/controller/vocabulary"
)

// Options are the reconcilers' settings.
type Options struct {
	// MaxConcurrentReconciles is how many objects of each kind reconcile at once.
	MaxConcurrentReconciles int
	// ProgressInterval is the least time between two status writes of a
	// MySQL that stays in progress.
	ProgressInterval time.Duration
	// AgentImage is the image the database pods copy the agent from.
	AgentImage string
	// CheckInterval is how often the servers of an idle MySQL are checked.
	CheckInterval time.Duration
	// FailoverGrace is how long a primary may be unreachable before failover.
	FailoverGrace time.Duration
	// MaxLag is the replication lag above which a replica is not ready.
	MaxLag time.Duration
	// StallAfter is how long a pod may be unable to run before its MySQL is Stalled.
	StallAfter time.Duration
	// DriftInterval is how often each database, user and grant is compared
	// with its server when nothing else happens.
	DriftInterval time.Duration
}

// BindFlags defines the flags of the reconcilers' settings on fs, with o
// holding their values.
func (o *Options) BindFlags(fs *flag.FlagSet) {
	fs.IntVar(&o.MaxConcurrentReconciles, "max-concurrent-reconciles", 4, "How many MySQLs reconcile at once.")
	fs.DurationVar(&o.ProgressInterval, "status-progress-interval", mysql.DefaultProgressInterval,
		"Least time between two status writes of a MySQL that stays in progress; Ready and Stalled are written at once. 0 writes every change.")
	fs.StringVar(&o.AgentImage, "agent-image", "",
		"Image the database pods copy the agent from; empty means the manager's own image, read from its pod (POD_NAME, POD_NAMESPACE).")
	fs.DurationVar(&o.CheckInterval, "check-interval", dataplane.DefaultCheckInterval,
		"How often the servers of an idle MySQL are checked (one status query per server); each MySQL at its own phase of the interval.")
	fs.DurationVar(&o.FailoverGrace, "failover-grace", dataplane.DefaultFailoverGrace,
		"How long a primary may be unreachable before the operator fails over.")
	fs.DurationVar(&o.MaxLag, "max-lag", dataplane.DefaultMaxLag, "Replication lag above which a replica is not ready.")
	fs.DurationVar(&o.StallAfter, "stall-after", mysql.DefaultStallAfter,
		"How long a pod may stay unschedulable, unable to pull its image or crash-looping before its MySQL is Stalled.")
	fs.DurationVar(&o.DriftInterval, "drift-interval", sqlobjects.DefaultDriftInterval,
		"How often each MySQLDatabase, MySQLUser and MySQLGrant is compared with its server when nothing else happens: a manual change on the server is undone within it.")
}

// Setup registers the MySQL reconciler, the reconcilers of databases,
// users and grants, and those of backups with mgr.
func Setup(ctx context.Context, mgr ctrl.Manager, o Options) error {
	recorder := mgr.GetEventRecorder(vocabulary.FieldManager)
	r := &mysql.Reconciler{
		Client:                  mgr.GetClient(),
		APIReader:               mgr.GetAPIReader(),
		Recorder:                recorder,
		MaxConcurrentReconciles: o.MaxConcurrentReconciles,
		ProgressInterval:        o.ProgressInterval,
		AgentImage:              o.AgentImage,
		CheckInterval:           o.CheckInterval,
		FailoverGrace:           o.FailoverGrace,
		MaxLag:                  o.MaxLag,
		StallAfter:              o.StallAfter,
	}
	if err := r.SetupWithManager(ctx, mgr); err != nil {
		return fmt.Errorf("set up the mysql controller: %w", err)
	}
	s := &sqlobjects.Reconciler{
		Client:                  mgr.GetClient(),
		APIReader:               mgr.GetAPIReader(),
		Recorder:                recorder,
		MaxConcurrentReconciles: o.MaxConcurrentReconciles,
		DriftInterval:           o.DriftInterval,
	}
	if err := s.SetupWithManager(ctx, mgr); err != nil {
		return fmt.Errorf("set up the mysqldatabase, mysqluser and mysqlgrant controllers: %w", err)
	}
	b := &backup.Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Recorder: recorder, AgentImage: o.AgentImage}
	if err := b.SetupWithManager(ctx, mgr); err != nil {
		return fmt.Errorf("set up the mysqlbackup controller: %w", err)
	}
	if err := (&backup.Scheduler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Recorder: recorder}).SetupWithManager(ctx, mgr); err != nil {
		return fmt.Errorf("set up the backup schedule: %w", err)
	}
	return registerStatusMetrics(mgr)
}

// registerStatusMetrics registers the MySQLs' metrics read from mgr's
// cache; once per process (a test may set up several managers).
func registerStatusMetrics(mgr ctrl.Manager) error {
	err := ctrlmetrics.Registry.Register(statusmetrics.Collector{Reader: mgr.GetCache()})
	var already prometheus.AlreadyRegisteredError
	if errors.As(err, &already) {
		return nil
	}
	return err
}
