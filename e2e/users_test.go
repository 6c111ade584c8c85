package e2e

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/internal/testenv"
)

// driftInterval is the e2e managers' --drift-interval: a manual change on
// a server must be undone within it.
const driftInterval = 10 * time.Second

// The e2e managers compare databases, users and grants with the servers
// every driftInterval. (Until e2e/main_test.go lists the flag in
// managerArgs itself.)
func init() {
	managerArgs = append(managerArgs, "--drift-interval="+driftInterval.String())
}

// TestGitOpsUsers applies the dev overlay's database, account and grant
// the way Flux would, next to a MySQL on the real node, and uses them as
// an application does, through the primary's Service: the grant allows
// exactly what it says, manual changes on the server are undone within
// the drift interval, a new password in the Secret works and the old one
// no longer does, and deletions do what their deletionPolicy says.
func TestGitOpsUsers(t *testing.T) {
	ns := testenv.NewNamespace(t, c.Client)
	createMySQL(t, ns, "sample", 1)
	objs, err := clusterBuild("kustomize/overlays/dev/users")
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		o.SetNamespace(ns)
	}
	if err := clusterApply(objs); err != nil {
		t.Fatal(err)
	}
	waitCurrent(t, key(ns, "sample"))
	for _, o := range objs {
		if o.GroupVersionKind().Group == databasev1.GroupVersion.Group {
			testenv.WaitKstatusOf(t, c.Client, o.GetKind(), key(ns, o.GetName()), status.CurrentStatus, timeout)
		}
	}
	root := rootDB(t, ns, "sample", "sample-primary")
	mustExec(t, root, "CREATE TABLE app.t (id INT PRIMARY KEY)")
	mustExec(t, root, "CREATE DATABASE other")
	mustExec(t, root, "CREATE TABLE other.t (id INT PRIMARY KEY)")
	password := secretPassword(t, objs)
	t.Run("the grant allows exactly what it says", func(t *testing.T) { testGrantBounds(t, ns, password) })
	t.Run("manual changes are undone within the drift interval", func(t *testing.T) { testUndone(t, ns, root, password) })
	t.Run("a new password in the Secret", func(t *testing.T) { testNewPassword(t, ns, password) })
	t.Run("after a change of primary", func(t *testing.T) { testNewPrimary(t, ns, objs) })
	t.Run("deletions", func(t *testing.T) { testDeletions(t, ns, root) })
	t.Run("the MySQL deleted first", func(t *testing.T) { testMySQLFirst(t, ns) })
}

// secretPassword returns the password of the overlay's Secret.
func secretPassword(t *testing.T, objs []*unstructured.Unstructured) string {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() == "Secret" {
			s := &corev1.Secret{}
			if err := c.Client.Get(context.Background(), key(o.GetNamespace(), o.GetName()), s); err != nil {
				t.Fatal(err)
			}
			return string(s.Data["password"])
		}
	}
	t.Fatal("the overlay has no Secret")
	return ""
}

func testGrantBounds(t *testing.T, ns, password string) {
	app := openDB(t, ns, "sample-primary", "app", password)
	mustExec(t, app, "INSERT INTO app.t VALUES (1)")
	mustExec(t, app, "UPDATE app.t SET id = 2 WHERE id = 1")
	for _, q := range []string{"INSERT INTO other.t VALUES (1)", "CREATE TABLE app.u (id INT)", "DROP TABLE app.t", "CREATE DATABASE mine"} {
		if _, err := app.Exec(q); errNumber(err) != 1142 && errNumber(err) != 1044 {
			t.Errorf("%s as app: %v, want access denied", q, err)
		}
	}
}

func testUndone(t *testing.T, ns string, root *sql.DB, password string) {
	mustExec(t, root, "REVOKE INSERT ON app.* FROM 'app'@'%'")
	within(t, "INSERT granted again", func(ctx context.Context) (bool, error) {
		g, err := showGrants(ctx, root, "app")
		return strings.Contains(g, "INSERT"), err
	})
	mustExec(t, root, "DROP USER 'app'@'%'")
	within(t, "the account back, with its password and grant", func(ctx context.Context) (bool, error) {
		g, err := showGrants(ctx, root, "app")
		return strings.Contains(g, "ON `app`.*"), err
	})
	if _, err := openDB(t, ns, "sample-primary", "app", password).Exec("INSERT INTO app.t VALUES (3)"); err != nil {
		t.Errorf("insert as the account made again: %v", err)
	}
}

// testNewPrimary grows the MySQL to 3 instances and moves its primary to
// instance 1: the database, the account and the grant stay Ready, and a
// manual REVOKE on the new primary is undone there.
func testNewPrimary(t *testing.T, ns string, objs []*unstructured.Unstructured) {
	ctx := context.Background()
	m := getMySQL(t, ns, "sample")
	patch := client.RawPatch(client.Merge.Type(), []byte(`{"spec":{"replicas":3,"preferredPrimary":1}}`))
	if err := c.Client.Patch(ctx, m, patch); err != nil {
		t.Fatal(err)
	}
	eventually(t, "sample-1 to be the primary", func(ctx context.Context) (bool, error) {
		return getMySQL(t, ns, "sample").Status.CurrentPrimary == "sample-1", nil
	})
	waitCurrent(t, key(ns, "sample"))
	for _, o := range objs {
		if o.GroupVersionKind().Group == databasev1.GroupVersion.Group {
			testenv.WaitKstatusOf(t, c.Client, o.GetKind(), key(ns, o.GetName()), status.CurrentStatus, timeout)
		}
	}
	root := podDB(t, ns, "sample-1", "root", rootPasswordOf(t, ns, "sample"))
	mustExec(t, root, "REVOKE INSERT ON app.* FROM 'app'@'%'")
	within(t, "INSERT granted again on the new primary", func(ctx context.Context) (bool, error) {
		g, err := showGrants(ctx, root, "app")
		return strings.Contains(g, "INSERT"), err
	})
}

// within waits for cond no longer than the drift interval allows: one
// interval, and as long again for the reconcile and the server.
func within(t *testing.T, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	testenv.Eventually(t, 2*driftInterval, what, cond)
}

func testNewPassword(t *testing.T, ns, old string) {
	ctx := context.Background()
	s := &corev1.Secret{}
	if err := c.Client.Get(ctx, key(ns, "app-password"), s); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(s.DeepCopy())
	s.Data["password"] = []byte("rotated-'`\"-pw")
	if err := c.Client.Patch(ctx, s, patch); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the new password to let app in", func(ctx context.Context) (bool, error) {
		return login(ctx, t, ns, "app", "rotated-'`\"-pw") == nil, nil
	})
	if err := login(ctx, t, ns, "app", old); errNumber(err) != 1045 {
		t.Errorf("login with the old password: %v, want access denied", err)
	}
}

func testDeletions(t *testing.T, ns string, root *sql.DB) {
	ctx := context.Background()
	scratch := &databasev1.MySQLDatabase{ObjectMeta: metav1.ObjectMeta{Name: "scratch", Namespace: ns},
		Spec: databasev1.MySQLDatabaseSpec{MySQLRef: databasev1.MySQLReference{Name: "sample"}, DeletionPolicy: databasev1.DeletionDelete}}
	if err := c.Client.Create(ctx, scratch); err != nil {
		t.Fatal(err)
	}
	testenv.WaitKstatusOf(t, c.Client, databasev1.MySQLDatabaseKind, key(ns, "scratch"), status.CurrentStatus, timeout)
	deleteObject(t, &databasev1.MySQLGrant{ObjectMeta: metav1.ObjectMeta{Name: "app-rw", Namespace: ns}})
	if g, err := showGrants(ctx, root, "app"); err != nil || strings.Contains(g, "ON `app`") {
		t.Errorf("grants of app after deleting the grant: %q (%v)", g, err)
	}
	deleteObject(t, &databasev1.MySQLUser{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: ns}})
	if g, err := showGrants(ctx, root, "app"); err != nil || g != "" {
		t.Errorf("account app after deleting the user: %q (%v), want none", g, err)
	}
	deleteObject(t, &databasev1.MySQLDatabase{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: ns}})
	deleteObject(t, scratch)
	var rows int
	if err := root.QueryRow("SELECT COUNT(*) FROM app.t").Scan(&rows); err != nil || rows == 0 {
		t.Errorf("rows of app (Retain) after deleting it: %d (%v), want them kept", rows, err)
	}
	var n int
	if err := root.QueryRow("SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = 'scratch'").Scan(&n); err != nil || n != 0 {
		t.Errorf("database scratch (Delete) after deleting it: %d (%v), want dropped", n, err)
	}
}

// testMySQLFirst deletes the MySQL, then a user and a grant that hold
// finalizers: they go at once.
func testMySQLFirst(t *testing.T, ns string) {
	ctx := context.Background()
	ref := databasev1.MySQLReference{Name: "sample"}
	user := &databasev1.MySQLUser{ObjectMeta: metav1.ObjectMeta{Name: "late", Namespace: ns},
		Spec: databasev1.MySQLUserSpec{MySQLRef: ref, PasswordSecretRef: databasev1.PasswordSecretReference{Name: "app-password"}}}
	grant := &databasev1.MySQLGrant{ObjectMeta: metav1.ObjectMeta{Name: "late", Namespace: ns},
		Spec: databasev1.MySQLGrantSpec{MySQLRef: ref, User: "late", Database: "app", Privileges: []databasev1.Privilege{"SELECT"}}}
	for _, o := range []client.Object{user, grant} {
		if err := c.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	testenv.WaitKstatusOf(t, c.Client, databasev1.MySQLUserKind, key(ns, "late"), status.CurrentStatus, timeout)
	testenv.WaitKstatusOf(t, c.Client, databasev1.MySQLGrantKind, key(ns, "late"), status.CurrentStatus, timeout)
	if err := c.Client.Delete(ctx, &databasev1.MySQL{ObjectMeta: metav1.ObjectMeta{Name: "sample", Namespace: ns}}); err != nil {
		t.Fatal(err)
	}
	deleteObject(t, user)
	deleteObject(t, grant)
}

// deleteObject deletes o and waits until it is gone.
func deleteObject(t *testing.T, o client.Object) {
	t.Helper()
	if err := c.Client.Delete(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	eventually(t, o.GetName()+" gone", func(ctx context.Context) (bool, error) {
		err := c.Client.Get(ctx, client.ObjectKeyFromObject(o), o)
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
}

// login tries once to log in as user through the primary's Service.
func login(ctx context.Context, t *testing.T, ns, user, password string) error {
	t.Helper()
	svc := &corev1.Service{}
	if err := c.Client.Get(ctx, key(ns, "sample-primary"), svc); err != nil {
		t.Fatal(err)
	}
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr = user, password, "tcp", svc.Spec.ClusterIP+":3306"
	cfg.Timeout = 2 * time.Second
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(connector)
	defer db.Close()
	return db.PingContext(ctx)
}

// showGrants returns SHOW GRANTS of user@'%', "" when the account does not exist.
func showGrants(ctx context.Context, root *sql.DB, user string) (string, error) {
	rows, err := root.QueryContext(ctx, "SHOW GRANTS FOR ?@'%'", user)
	if errNumber(err) == 1141 {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	defer rows.Close()
	var lines []string
	for rows.Next() {
		var l string
		if err := rows.Scan(&l); err != nil {
			return "", err
		}
		lines = append(lines, l)
	}
	if errNumber(rows.Err()) == 1141 {
		return "", nil
	}
	return strings.Join(lines, "\n"), rows.Err()
}

// errNumber returns the server error number of err, 0 if none.
func errNumber(err error) uint16 {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number
	}
	return 0
}
