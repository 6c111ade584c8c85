package sqlobjects

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/controller/vocabulary"
	"github.com/example/mysql-operator/internal/ctrltest"
	"github.com/example/mysql-operator/internal/testenv"
)

// sqlTestDrift is the drift interval of the SQL objects' tests.
const sqlTestDrift = 2 * time.Second

// sqlFixture is a MySQL with one real server, and its SQL objects.
type sqlFixture struct {
	ns    string
	m     *databasev1.MySQL
	addr  string
	root  *sql.DB
	db    *databasev1.MySQLDatabase
	user  *databasev1.MySQLUser
	grant *databasev1.MySQLGrant
}

func ref() databasev1.MySQLReference { return databasev1.MySQLReference{Name: "db"} }

func kindOf(obj client.Object) string {
	switch obj.(type) {
	case *databasev1.MySQLDatabase:
		return databasev1.MySQLDatabaseKind
	case *databasev1.MySQLUser:
		return databasev1.MySQLUserKind
	}
	return databasev1.MySQLGrantKind
}

func waitObject(t *testing.T, obj client.Object, want status.Status) {
	t.Helper()
	testenv.WaitKstatusOf(t, env.Client, kindOf(obj), client.ObjectKeyFromObject(obj), want, 30*time.Second)
}

func mustCreate(t *testing.T, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		if err := env.Client.Create(context.Background(), o); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSQLObjects drives a database, an account and a grant through their
// life on a real server: they wait for their MySQL, are applied, drift is
// undone, the password rotates, a missing Secret stalls and recovers, and
// deletion does what deletionPolicy says.
func TestSQLObjects(t *testing.T) {
	writes := startSQLManager(t, sqlTestDrift)
	f := &sqlFixture{ns: env.NewNamespace(t)}
	t.Cleanup(func() {
		if t.Failed() {
			logEvents(t, f.ns)
		}
	})
	f.db = &databasev1.MySQLDatabase{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: f.ns},
		Spec: databasev1.MySQLDatabaseSpec{MySQLRef: ref(), CharacterSet: "utf8mb4", Collation: "utf8mb4_bin"}}
	f.user = &databasev1.MySQLUser{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: f.ns},
		Spec: databasev1.MySQLUserSpec{MySQLRef: ref(), PasswordSecretRef: databasev1.PasswordSecretReference{Name: "app-pw"}, MaxUserConnections: 10}}
	f.grant = &databasev1.MySQLGrant{ObjectMeta: metav1.ObjectMeta{Name: "app-rw", Namespace: f.ns},
		Spec: databasev1.MySQLGrantSpec{MySQLRef: ref(), User: "app", Database: "app", Privileges: []databasev1.Privilege{"SELECT", "INSERT"}}}
	mustCreate(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "app-pw", Namespace: f.ns}, Data: map[string][]byte{"password": []byte("first'`%pw")}},
		f.db, f.user, f.grant)

	t.Run("waits for its MySQL, without a finalizer", func(t *testing.T) {
		waitReady(t, f.user, false, vocabulary.ReasonMySQLNotFound)
		waitObject(t, f.user, status.InProgressStatus)
		if controllerutil.ContainsFinalizer(f.user, vocabulary.FinalizerSQLCleanup) {
			t.Error("a finalizer before there is anything to clean up")
		}
		f.m = ctrltest.NewMySQL(f.ns, "db", 1)
		env.Create(t, f.m)
		waitReady(t, f.grant, false, vocabulary.ReasonMySQLNotReady)
	})
	env.MarkStatefulSetReady(t, client.ObjectKey{Namespace: f.ns, Name: "db"})
	f.addr = env.ServePods(t, f.m, 0, 1)[0].Addr()
	env.WaitKstatus(t, client.ObjectKeyFromObject(f.m), status.CurrentStatus)
	f.root = rootOf(t, f.m, f.addr)
	for _, o := range []client.Object{f.db, f.user, f.grant} {
		waitObject(t, o, status.CurrentStatus)
	}
	t.Run("applied on the server", func(t *testing.T) { testApplied(t, f) })
	t.Run("a reconcile with no change writes nothing", func(t *testing.T) { testNoWrites(t, f, writes) })
	t.Run("drift is undone", func(t *testing.T) { testDrift(t, f) })
	t.Run("the password rotates", func(t *testing.T) { testRotation(t, f) })
	t.Run("a missing Secret stalls, then recovers", func(t *testing.T) { testMissingSecret(t, f) })
	t.Run("a refused spec stalls", func(t *testing.T) { testRefused(t, f) })
	t.Run("deletion", func(t *testing.T) { testDeletion(t, f) })
}

func testApplied(t *testing.T, f *sqlFixture) {
	ctx := context.Background()
	var cs, coll string
	if err := f.root.QueryRowContext(ctx, "SELECT DEFAULT_CHARACTER_SET_NAME, DEFAULT_COLLATION_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = 'app'").Scan(&cs, &coll); err != nil {
		t.Fatal(err)
	}
	if cs != "utf8mb4" || coll != "utf8mb4_bin" {
		t.Errorf("database app: %s %s, want utf8mb4 utf8mb4_bin", cs, coll)
	}
	if _, err := f.root.ExecContext(ctx, "CREATE TABLE app.t (id INT)"); err != nil {
		t.Fatal(err)
	}
	app := openAs(t, f.addr, "app", "first'`%pw")
	if _, err := app.ExecContext(ctx, "INSERT INTO app.t VALUES (1)"); err != nil {
		t.Errorf("insert as app: %v", err)
	}
	if _, err := app.ExecContext(ctx, "DELETE FROM app.t"); errno(err) != 1142 {
		t.Errorf("delete as app, which the grant does not allow: %v, want error 1142", err)
	}
	if _, err := app.ExecContext(ctx, "CREATE DATABASE other"); errno(err) != 1044 {
		t.Errorf("create database as app: %v, want error 1044", err)
	}
	var maxConn int
	if err := f.root.QueryRowContext(ctx, "SELECT max_user_connections FROM mysql.user WHERE User = 'app'").Scan(&maxConn); err != nil || maxConn != 10 {
		t.Errorf("max_user_connections = %d (%v), want 10", maxConn, err)
	}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(f.user), f.user); err != nil {
		t.Fatal(err)
	}
	if !controllerutil.ContainsFinalizer(f.user, vocabulary.FinalizerSQLCleanup) || f.user.Status.PasswordSecretVersion == "" {
		t.Errorf("user: finalizers %v, passwordSecretVersion %q: want the finalizer and a version", f.user.Finalizers, f.user.Status.PasswordSecretVersion)
	}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(f.db), f.db); err != nil {
		t.Fatal(err)
	}
	if controllerutil.ContainsFinalizer(f.db, vocabulary.FinalizerSQLCleanup) {
		t.Error("a database with deletionPolicy Retain holds a finalizer")
	}
}

// testNoWrites lets the drift checks run twice over objects in order:
// none sends a request that changes anything, nor records an event.
func testNoWrites(t *testing.T, f *sqlFixture, writes *ctrltest.WriteCounter) {
	ctx := context.Background()
	sqlWrites := func() (n int) {
		for _, w := range writes.Snapshot() {
			if strings.Contains(w, "/mysqldatabases/") || strings.Contains(w, "/mysqlusers/") || strings.Contains(w, "/mysqlgrants/") {
				n++
			}
		}
		return n
	}
	before, events, count := sqlWrites(), sqlEvents(ctx, t, f.ns), sqlReconcileCount(t)
	ctrltest.Eventually(t, "two drift checks of each object", func(context.Context) (bool, error) { return sqlReconcileCount(t) >= count+6, nil })
	if after := sqlWrites(); after != before {
		t.Errorf("drift checks of objects in order sent %d writes: %v", after-before, writes.Snapshot())
	}
	if n := sqlEvents(ctx, t, f.ns); n != events {
		t.Errorf("drift checks of objects in order recorded %d events", n-events)
	}
}

func testDrift(t *testing.T, f *sqlFixture) {
	ctx := context.Background()
	mustExec(t, f.root, "REVOKE INSERT ON app.* FROM 'app'@'%'")
	mustExec(t, f.root, "ALTER DATABASE app COLLATE utf8mb4_general_ci")
	ctrltest.Eventually(t, "INSERT granted again", func(ctx context.Context) (bool, error) {
		g, err := grantsOf(ctx, f.root, "app", "%")
		return strings.Contains(g, "GRANT SELECT, INSERT ON `app`.*"), err
	})
	ctrltest.Eventually(t, "the collation put back", func(ctx context.Context) (bool, error) {
		var coll string
		err := f.root.QueryRowContext(ctx, "SELECT DEFAULT_COLLATION_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = 'app'").Scan(&coll)
		return coll == "utf8mb4_bin", err
	})
	mustExec(t, f.root, "GRANT DELETE ON app.* TO 'app'@'%'")
	ctrltest.Eventually(t, "a DriftCorrected event for the manual GRANT", func(ctx context.Context) (bool, error) {
		return env.HasEvent(ctx, f.ns, vocabulary.EventDriftCorrected, "revoked DELETE on app.* from 'app'@'%'")
	})
	mustExec(t, f.root, "DROP USER 'app'@'%'")
	ctrltest.Eventually(t, "the account and its grant back", func(ctx context.Context) (bool, error) {
		g, err := grantsOf(ctx, f.root, "app", "%")
		return strings.Contains(g, "GRANT SELECT, INSERT ON `app`.*"), err
	})
	if err := openAs(t, f.addr, "app", "first'`%pw").PingContext(ctx); err != nil {
		t.Errorf("login after the account was made again: %v", err)
	}
	ctrltest.Eventually(t, "a DriftCorrected event for the DROP USER", func(ctx context.Context) (bool, error) {
		return env.HasEvent(ctx, f.ns, vocabulary.EventDriftCorrected, "created account 'app'@'%'")
	})
}

func testRotation(t *testing.T, f *sqlFixture) {
	ctx := context.Background()
	s := &corev1.Secret{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: "app-pw"}, s); err != nil {
		t.Fatal(err)
	}
	s.Data["password"] = []byte("second\"pw")
	if err := env.Client.Update(ctx, s); err != nil {
		t.Fatal(err)
	}
	ctrltest.Eventually(t, "the new password to work", func(ctx context.Context) (bool, error) {
		return openAs(t, f.addr, "app", "second\"pw").PingContext(ctx) == nil, nil
	})
	if err := openAs(t, f.addr, "app", "first'`%pw").PingContext(ctx); errno(err) != 1045 {
		t.Errorf("login with the old password: %v, want error 1045", err)
	}
	checkNoPassword(t, f, "second\"pw", "first'`%pw")
}

// checkNoPassword checks that no status or event of the namespace holds a password.
func checkNoPassword(t *testing.T, f *sqlFixture, passwords ...string) {
	t.Helper()
	u := &databasev1.MySQLUser{}
	if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(f.user), u); err != nil {
		t.Fatal(err)
	}
	text := fmt.Sprintf("%+v", u.Status)
	for _, pw := range passwords {
		if strings.Contains(text, pw) {
			t.Errorf("status holds a password: %s", text)
		}
		list := &eventsv1.EventList{}
		if err := env.Client.List(context.Background(), list, client.InNamespace(f.ns)); err != nil {
			t.Fatal(err)
		}
		for _, e := range list.Items {
			if strings.Contains(e.Note, pw) {
				t.Errorf("event %s holds a password", e.Reason)
			}
		}
	}
}

func testMissingSecret(t *testing.T, f *sqlFixture) {
	ctx := context.Background()
	u := &databasev1.MySQLUser{ObjectMeta: metav1.ObjectMeta{Name: "late", Namespace: f.ns},
		Spec: databasev1.MySQLUserSpec{MySQLRef: ref(), PasswordSecretRef: databasev1.PasswordSecretReference{Name: "late-pw", Key: "pw"}}}
	mustCreate(t, u)
	waitReady(t, u, false, vocabulary.ReasonSecretNotFound)
	waitObject(t, u, status.FailedStatus)
	mustCreate(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "late-pw", Namespace: f.ns}, Data: map[string][]byte{"other": []byte("x")}})
	waitReady(t, u, false, vocabulary.ReasonSecretInvalid)
	s := &corev1.Secret{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: "late-pw"}, s); err != nil {
		t.Fatal(err)
	}
	s.Data["pw"] = []byte("late-pw")
	if err := env.Client.Update(ctx, s); err != nil {
		t.Fatal(err)
	}
	waitObject(t, u, status.CurrentStatus)
	if err := openAs(t, f.addr, "late", "late-pw").PingContext(ctx); err != nil {
		t.Errorf("login as late: %v", err)
	}
}

func testRefused(t *testing.T, f *sqlFixture) {
	d := &databasev1.MySQLDatabase{ObjectMeta: metav1.ObjectMeta{Name: "bad", Namespace: f.ns},
		Spec: databasev1.MySQLDatabaseSpec{MySQLRef: ref(), Collation: "nosuch_ci"}}
	mustCreate(t, d)
	waitReady(t, d, false, vocabulary.ReasonSQLRejected)
	waitObject(t, d, status.FailedStatus)
}

func testDeletion(t *testing.T, f *sqlFixture) {
	ctx := context.Background()
	scratch := &databasev1.MySQLDatabase{ObjectMeta: metav1.ObjectMeta{Name: "scratch", Namespace: f.ns},
		Spec: databasev1.MySQLDatabaseSpec{MySQLRef: ref(), Name: "scr'atch`%_ü", DeletionPolicy: databasev1.DeletionDelete}}
	mustCreate(t, scratch)
	waitObject(t, scratch, status.CurrentStatus)
	deleteAndWait(t, f.grant)
	if g, err := grantsOf(ctx, f.root, "app", "%"); err != nil || strings.Contains(g, "ON `app`") {
		t.Errorf("grants of app after deleting the grant: %q (%v), want none on app", g, err)
	}
	ctrltest.Eventually(t, "a CleanedUp event for the grant", func(ctx context.Context) (bool, error) {
		return env.HasEvent(ctx, f.ns, vocabulary.EventCleanedUp, "revoked INSERT, SELECT on app.* from 'app'@'%'")
	})
	deleteAndWait(t, f.user)
	if g, err := grantsOf(ctx, f.root, "app", "%"); err != nil || g != "" {
		t.Errorf("account app after deleting the user: %q (%v), want none", g, err)
	}
	deleteAndWait(t, f.db)
	deleteAndWait(t, scratch)
	var n int
	if err := f.root.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME IN ('app', ?)", "scr'atch`%_ü").Scan(&n); err != nil || n != 1 {
		t.Errorf("%d of app (Retain) and scratch (Delete) left (%v), want app only", n, err)
	}
	if err := f.root.QueryRowContext(ctx, "SELECT COUNT(*) FROM app.t").Scan(&n); err != nil {
		t.Errorf("the data of app (Retain): %v", err)
	}
}

// deleteAndWait deletes o and waits until it is gone.
func deleteAndWait(t *testing.T, o client.Object) {
	t.Helper()
	if err := env.Client.Delete(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	ctrltest.Eventually(t, o.GetName()+" gone", func(ctx context.Context) (bool, error) {
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(o), o)
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
}

// mustExec runs a statement, failing the test on an error.
func mustExec(t *testing.T, db *sql.DB, query string, args ...any) {
	t.Helper()
	if _, err := db.Exec(query, args...); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}

// logEvents logs the events of ns, to tell what happened when a test failed.
func logEvents(t *testing.T, ns string) {
	list := &eventsv1.EventList{}
	if err := env.Client.List(context.Background(), list, client.InNamespace(ns)); err != nil {
		t.Log(err)
		return
	}
	for _, e := range list.Items {
		t.Logf("event %s %s/%s: %s", e.Reason, e.Regarding.Kind, e.Regarding.Name, e.Note)
	}
}
