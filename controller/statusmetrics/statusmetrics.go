// Package statusmetrics exports, per MySQL, what the operator knows and
// the agents do not: whether it is Ready, its errant instances, its last
// failover, its last complete backup and its certificate's expiry. They
// are read from the manager's cache at each scrape (a pure function of
// the cached MySQLs and MySQLBackups), so nothing is kept, written or
// forgotten when a MySQL goes. Each replica of the manager exports the
// MySQLs of its shard; alerting rules take the max by namespace and mysql.
package statusmetrics

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1 "github.com/example/mysql-operator/api/v1"
)

// labels are every metric's: the MySQL's namespace and name.
var labels = []string{"namespace", "mysql"}

// The metrics, as docs/metrics.md lists them.
var (
	ready = prometheus.NewDesc("mysql_operator_mysql_ready",
		"1 when the MySQL's Ready condition is True.", labels, nil)
	errant = prometheus.NewDesc("mysql_operator_mysql_errant_instances",
		"Instances holding transactions the primary does not have (errant), which the operator reports and a human repairs.", labels, nil)
	failover = prometheus.NewDesc("mysql_operator_mysql_last_failover_timestamp_seconds",
		"When the operator last failed the MySQL over (absent when it never did).", labels, nil)
	backupConfigured = prometheus.NewDesc("mysql_operator_mysql_backup_configured",
		"1 when the MySQL has spec.backup.", labels, nil)
	lastBackup = prometheus.NewDesc("mysql_operator_mysql_last_backup_timestamp_seconds",
		"When the MySQL's last complete backup completed (absent when none did).", labels, nil)
	certificate = prometheus.NewDesc("mysql_operator_mysql_certificate_expiry_timestamp_seconds",
		"When the servers' certificate expires (absent while TLS is disabled).", labels, nil)
)

// listTimeout bounds the reads of one scrape from the cache.
const listTimeout = 5 * time.Second

// Collector is the prometheus.Collector of the MySQLs in a cache.
type Collector struct {
	// Reader is the manager's cache.
	Reader client.Reader
}

// Describe implements prometheus.Collector.
func (c Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{ready, errant, failover, backupConfigured, lastBackup, certificate} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c Collector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), listTimeout)
	defer cancel()
	mysqls, backups := &databasev1.MySQLList{}, &databasev1.MySQLBackupList{}
	if err := c.Reader.List(ctx, mysqls); err != nil {
		ctrl.Log.WithName("statusmetrics").Error(err, "list MySQLs")
		return
	}
	if err := c.Reader.List(ctx, backups); err != nil {
		ctrl.Log.WithName("statusmetrics").Error(err, "list MySQLBackups")
		return
	}
	for _, m := range Metrics(mysqls, backups) {
		ch <- m
	}
}

// Metrics are the metrics of mysqls, their last backups among backups.
func Metrics(mysqls *databasev1.MySQLList, backups *databasev1.MySQLBackupList) []prometheus.Metric {
	last := backups.LastComplete()
	var out []prometheus.Metric
	gauge := func(d *prometheus.Desc, v float64, m *databasev1.MySQL) {
		out = append(out, prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, m.Namespace, m.Name))
	}
	stamp := func(d *prometheus.Desc, t *metav1.Time, m *databasev1.MySQL) {
		if t != nil && !t.IsZero() {
			gauge(d, float64(t.Unix()), m)
		}
	}
	for i := range mysqls.Items {
		m := &mysqls.Items[i]
		gauge(ready, boolean(apimeta.IsStatusConditionTrue(m.Status.Conditions, databasev1.ConditionReady)), m)
		n := 0
		for _, in := range m.Status.Instances {
			if in.Role == databasev1.RoleErrant {
				n++
			}
		}
		gauge(errant, float64(n), m)
		if f := m.Status.LastFailover; f != nil {
			stamp(failover, &f.Time, m)
		}
		gauge(backupConfigured, boolean(m.Spec.Backup != nil), m)
		if b := last[m.Namespace+"/"+m.Name]; b != nil {
			stamp(lastBackup, b.Status.CompletionTime, m)
		}
		if t := m.Status.TLS; t != nil {
			stamp(certificate, &t.NotAfter, m)
		}
	}
	return out
}

// boolean is 1 for true, 0 for false.
func boolean(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
