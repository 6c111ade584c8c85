package sqlobjects

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"
	mysqldriver "github.com/go-sql-driver/mysql"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/controller/children"
	"github.com/example/mysql-operator/controller/dataplane"
	"github.com/example/mysql-operator/controller/mysql"
	"github.com/example/mysql-operator/controller/vocabulary"
	"github.com/example/mysql-operator/internal/ctrltest"
)

// startSQLManager runs a manager with the MySQL reconciler and the SQL
// objects' reconcilers, as the RBAC-restricted user, comparing objects
// with the servers every drift. Its mutating requests are counted.
func startSQLManager(t *testing.T, drift time.Duration) *ctrltest.WriteCounter {
	t.Helper()
	mgr, writes := env.NewManager(t, children.CacheOptions(labels.Everything()))
	recorder := mgr.GetEventRecorder(vocabulary.FieldManager)
	m := &mysql.Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Recorder: recorder, MaxConcurrentReconciles: 2,
		AgentImage: ctrltest.AgentImage, CheckInterval: dataplane.DefaultCheckInterval, FailoverGrace: dataplane.DefaultFailoverGrace,
		MaxLag: dataplane.DefaultMaxLag, StallAfter: mysql.DefaultStallAfter}
	s := &Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Recorder: recorder, MaxConcurrentReconciles: 2, DriftInterval: drift}
	ctrltest.Run(t, mgr, func(ctx context.Context) error {
		if err := m.SetupWithManager(ctx, mgr); err != nil {
			return err
		}
		return s.SetupWithManager(ctx, mgr)
	})
	return writes
}

// sqlReconcileCount sums controller-runtime's reconcile counters of the
// SQL objects' controllers.
func sqlReconcileCount(t *testing.T) float64 {
	t.Helper()
	return ctrltest.ReconcileCount(t, "mysqldatabase", "mysqluser", "mysqlgrant")
}

// openAs opens a connection pool to addr as user (not through dbop: the
// test is the database's client).
func openAs(t *testing.T, addr, user, password string) *sql.DB {
	t.Helper()
	cfg := mysqldriver.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr = user, password, "tcp", addr
	cfg.Timeout, cfg.ReadTimeout, cfg.InterpolateParams = 5*time.Second, 10*time.Second, true
	conn, err := mysqldriver.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(conn)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// errno returns the server error number of err, 0 if none.
func errno(err error) uint16 {
	var me *mysqldriver.MySQLError
	if errors.As(err, &me) {
		return me.Number
	}
	return 0
}

// rootOf opens a pool as root to addr, with the password of m's root Secret.
func rootOf(t *testing.T, m *databasev1.MySQL, addr string) *sql.DB {
	t.Helper()
	s := &corev1.Secret{}
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: m.Namespace, Name: children.RootSecretName(m)}, s); err != nil {
		t.Fatal(err)
	}
	return openAs(t, addr, "root", string(s.Data[children.RootPasswordKey]))
}

// grantsOf returns SHOW GRANTS of an account, one line each, "" lines
// when it does not exist.
func grantsOf(ctx context.Context, root *sql.DB, user, host string) (string, error) {
	rows, err := root.QueryContext(ctx, "SHOW GRANTS FOR ?@?", user, host)
	if errno(err) == 1141 {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	defer func() { _ = rows.Close() }()
	var lines []string
	for rows.Next() {
		var l string
		if err := rows.Scan(&l); err != nil {
			return "", err
		}
		lines = append(lines, l)
	}
	if err := rows.Err(); errno(err) == 1141 {
		return "", nil
	} else if err != nil {
		return "", err
	}
	return strings.Join(lines, "\n"), nil
}

// waitReady waits until obj's Ready condition has status and reason.
func waitReady(t *testing.T, obj sqlObject, ready bool, reason string) {
	t.Helper()
	ctrltest.Eventually(t, obj.GetName()+" Ready="+reason, func(ctx context.Context) (bool, error) {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return false, err
		}
		c := conditions.Get(obj, databasev1.ConditionReady)
		return c != nil && (c.Status == "True") == ready && c.Reason == reason, nil
	})
}

// sqlEvents counts the events of ns about the SQL objects.
func sqlEvents(ctx context.Context, t *testing.T, ns string) int {
	t.Helper()
	list := &eventsv1.EventList{}
	if err := env.Client.List(ctx, list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range list.Items {
		if strings.HasPrefix(e.Regarding.Kind, "MySQL") && e.Regarding.Kind != databasev1.MySQLKind {
			n++
		}
	}
	return n
}
