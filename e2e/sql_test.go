package e2e

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/example/mysql-operator/internal/workload"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

// The tests are the database's clients: they log in through the MySQL's
// Services, from this machine, as an application would. (The operator's
// own SQL goes through dbop only.)

// rootDB opens a connection pool as root, with the password of the MySQL's
// root Secret, to the ClusterIP of service, and waits until it answers:
// kube-proxy programs a new Service's rules a moment after it exists.
func rootDB(t *testing.T, ns, name, service string) *sql.DB {
	t.Helper()
	ctx := context.Background()
	secret := &corev1.Secret{}
	if err := c.Client.Get(ctx, key(ns, name+"-root"), secret); err != nil {
		t.Fatal(err)
	}
	return openDB(t, ns, service, "root", string(secret.Data["password"]))
}

// openDB opens a pool as user to the ClusterIP of service and waits until
// a query goes through.
func openDB(t *testing.T, ns, service, user, password string) *sql.DB {
	t.Helper()
	svc := &corev1.Service{}
	if err := c.Client.Get(context.Background(), key(ns, service), svc); err != nil {
		t.Fatal(err)
	}
	return openAddr(t, "Service "+service, svc.Spec.ClusterIP, user, password)
}

// podDB opens a pool as user to one pod's address, as a DBA reaching one
// server would, and waits until a query goes through.
func podDB(t *testing.T, ns, pod, user, password string) *sql.DB {
	t.Helper()
	p := &corev1.Pod{}
	if err := c.Client.Get(context.Background(), key(ns, pod), p); err != nil {
		t.Fatal(err)
	}
	return openAddr(t, "pod "+pod, p.Status.PodIP, user, password)
}

// openAddr opens a pool as user to port 3306 of ip and waits until a query
// goes through.
func openAddr(t *testing.T, what, ip, user, password string) *sql.DB {
	t.Helper()
	db, err := workload.Open(ip, user, password)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	var last error
	err = wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		last = db.PingContext(ctx)
		return last == nil, nil
	})
	if err != nil {
		t.Fatalf("a login as %s to %s: %v; the last try: %v", user, what, err, last)
	}
	return db
}

// serverVariable reads a global variable of the server behind the MySQL's
// client Service, the primary.
func serverVariable(t *testing.T, ns, name, variable string) string {
	t.Helper()
	return show(t, rootDB(t, ns, name, name), "SHOW GLOBAL VARIABLES LIKE ?", variable)
}

// show reads the value of name through db with a SHOW ... LIKE ?
// statement (its second column).
func show(t *testing.T, db *sql.DB, statement, name string) string {
	t.Helper()
	var n, v string
	if err := db.QueryRow(statement, name).Scan(&n, &v); err != nil {
		t.Fatalf("%s %q: %v", statement, name, err)
	}
	return v
}

// mustExec runs a statement, failing the test on an error.
func mustExec(t *testing.T, db *sql.DB, query string, args ...any) {
	t.Helper()
	if _, err := db.Exec(query, args...); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}

// rootPasswordOf returns the password of the MySQL's generated root Secret.
func rootPasswordOf(t *testing.T, ns, name string) string {
	t.Helper()
	s := &corev1.Secret{}
	if err := c.Client.Get(context.Background(), key(ns, name+"-root"), s); err != nil {
		t.Fatal(err)
	}
	return string(s.Data["password"])
}
