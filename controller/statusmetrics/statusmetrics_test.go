package statusmetrics

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	databasev1 "github.com/example/mysql-operator/api/v1"
)

// collected serves fixed MySQLs and backups as the collector's metrics.
type collected struct {
	mysqls  *databasev1.MySQLList
	backups *databasev1.MySQLBackupList
}

func (c collected) Describe(ch chan<- *prometheus.Desc) { Collector{}.Describe(ch) }
func (c collected) Collect(ch chan<- prometheus.Metric) {
	for _, m := range Metrics(c.mysqls, c.backups) {
		ch <- m
	}
}

// TestMetrics exports a Ready MySQL with a failover, an errant instance,
// backups and TLS, and one with none of them.
func TestMetrics(t *testing.T) {
	at := func(s int64) *metav1.Time { return &metav1.Time{Time: time.Unix(s, 0)} }
	mysqls := &databasev1.MySQLList{Items: []databasev1.MySQL{
		{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "orders"},
			Spec: databasev1.MySQLSpec{Backup: &databasev1.BackupPolicy{}},
			Status: databasev1.MySQLStatus{
				Conditions:   []metav1.Condition{{Type: databasev1.ConditionReady, Status: metav1.ConditionTrue}},
				Instances:    []databasev1.InstanceStatus{{Name: "orders-0", Role: databasev1.RolePrimary}, {Name: "orders-1", Role: databasev1.RoleErrant}},
				LastFailover: &databasev1.PrimaryChange{Time: *at(1000)},
				TLS:          &databasev1.TLSStatus{NotAfter: *at(9000)}}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "new"}},
	}}
	backup := func(mysql string, phase databasev1.BackupPhase, done int64) databasev1.MySQLBackup {
		return databasev1.MySQLBackup{ObjectMeta: metav1.ObjectMeta{Namespace: "shop"},
			Spec:   databasev1.MySQLBackupSpec{MySQLRef: databasev1.MySQLReference{Name: mysql}},
			Status: databasev1.MySQLBackupStatus{Phase: phase, CompletionTime: at(done)}}
	}
	backups := &databasev1.MySQLBackupList{Items: []databasev1.MySQLBackup{
		backup("orders", databasev1.BackupComplete, 2000), backup("orders", databasev1.BackupComplete, 3000),
		backup("orders", databasev1.BackupFailed, 4000)}}
	want := `
# HELP mysql_operator_mysql_backup_configured 1 when the MySQL has spec.backup.
# TYPE mysql_operator_mysql_backup_configured gauge
mysql_operator_mysql_backup_configured{mysql="new",namespace="shop"} 0
mysql_operator_mysql_backup_configured{mysql="orders",namespace="shop"} 1
# HELP mysql_operator_mysql_certificate_expiry_timestamp_seconds When the servers' certificate expires (absent while TLS is disabled).
# TYPE mysql_operator_mysql_certificate_expiry_timestamp_seconds gauge
mysql_operator_mysql_certificate_expiry_timestamp_seconds{mysql="orders",namespace="shop"} 9000
# HELP mysql_operator_mysql_errant_instances Instances holding transactions the primary does not have (errant), which the operator reports and a human repairs.
# TYPE mysql_operator_mysql_errant_instances gauge
mysql_operator_mysql_errant_instances{mysql="new",namespace="shop"} 0
mysql_operator_mysql_errant_instances{mysql="orders",namespace="shop"} 1
# HELP mysql_operator_mysql_last_backup_timestamp_seconds When the MySQL's last complete backup completed (absent when none did).
# TYPE mysql_operator_mysql_last_backup_timestamp_seconds gauge
mysql_operator_mysql_last_backup_timestamp_seconds{mysql="orders",namespace="shop"} 3000
# HELP mysql_operator_mysql_last_failover_timestamp_seconds When the operator last failed the MySQL over (absent when it never did).
# TYPE mysql_operator_mysql_last_failover_timestamp_seconds gauge
mysql_operator_mysql_last_failover_timestamp_seconds{mysql="orders",namespace="shop"} 1000
# HELP mysql_operator_mysql_ready 1 when the MySQL's Ready condition is True.
# TYPE mysql_operator_mysql_ready gauge
mysql_operator_mysql_ready{mysql="new",namespace="shop"} 0
mysql_operator_mysql_ready{mysql="orders",namespace="shop"} 1
`
	if err := testutil.CollectAndCompare(collected{mysqls, backups}, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
}
