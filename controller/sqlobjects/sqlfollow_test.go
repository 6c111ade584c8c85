package sqlobjects

// The SQL objects follow their MySQL: through a switchover to another
// primary, and through its deletion.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/fluxcd/pkg/runtime/conditions"
	"github.com/go-sql-driver/mysql"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/controller/vocabulary"
	"github.com/example/mysql-operator/internal/ctrltest"
)

// TestSQLObjectsOutliveTheirMySQL deletes a MySQL before its databases,
// users and grants, as deleting a whole application does: their
// finalizers are released without a server, whether the MySQL is still
// being deleted or already gone.
func TestSQLObjectsOutliveTheirMySQL(t *testing.T) {
	startSQLManager(t, sqlTestDrift)
	ctx := context.Background()
	ns := eventsOnFailure(t, env.NewNamespace(t))
	m := ctrltest.NewMySQL(ns, "db", 1)
	m.Finalizers = []string{"example.com/hold"} // keeps it "being deleted"
	env.Create(t, m)
	env.MarkStatefulSetReady(t, client.ObjectKey{Namespace: ns, Name: "db"})
	env.ServePods(t, m, 0, 1)
	env.WaitKstatus(t, client.ObjectKeyFromObject(m), status.CurrentStatus)

	objs := func(suffix string) []client.Object {
		return []client.Object{
			&databasev1.MySQLDatabase{ObjectMeta: metav1.ObjectMeta{Name: "data" + suffix, Namespace: ns},
				Spec: databasev1.MySQLDatabaseSpec{MySQLRef: ref(), DeletionPolicy: databasev1.DeletionDelete}},
			&databasev1.MySQLUser{ObjectMeta: metav1.ObjectMeta{Name: "user" + suffix, Namespace: ns},
				Spec: databasev1.MySQLUserSpec{MySQLRef: ref(), PasswordSecretRef: databasev1.PasswordSecretReference{Name: "pw"}}},
			&databasev1.MySQLGrant{ObjectMeta: metav1.ObjectMeta{Name: "grant" + suffix, Namespace: ns},
				Spec: databasev1.MySQLGrantSpec{MySQLRef: ref(), User: "user" + suffix, Database: "data" + suffix, Privileges: []databasev1.Privilege{"SELECT"}}},
		}
	}
	mustCreate(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "pw", Namespace: ns}, Data: map[string][]byte{"password": []byte("pw")}})
	first, second := objs("1"), objs("2")
	mustCreate(t, append(first, second...)...)
	for _, o := range append(first, second...) {
		waitObject(t, o, status.CurrentStatus)
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(o), o); err != nil || !controllerutil.ContainsFinalizer(o, vocabulary.FinalizerSQLCleanup) {
			t.Fatalf("%s: no finalizer (%v)", o.GetName(), err)
		}
	}

	if err := env.Client.Delete(ctx, m); err != nil {
		t.Fatal(err)
	}
	t.Run("the MySQL being deleted", func(t *testing.T) {
		for _, o := range first {
			deleteAndWait(t, o)
		}
		ctrltest.Eventually(t, "a CleanupSkipped event", func(ctx context.Context) (bool, error) {
			return env.HasEvent(ctx, ns, vocabulary.EventCleanupSkipped, "MySQL db is gone or being deleted")
		})
	})

	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(m), m); err != nil {
		t.Fatal(err)
	}
	m.Finalizers = nil
	if err := env.Client.Update(ctx, m); err != nil {
		t.Fatal(err)
	}
	t.Run("the MySQL gone", func(t *testing.T) {
		ctrltest.Eventually(t, "the MySQL gone", func(ctx context.Context) (bool, error) {
			err := env.Client.Get(ctx, client.ObjectKeyFromObject(m), m)
			return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
		})
		for _, o := range second {
			deleteAndWait(t, o)
		}
	})
}

// TestSQLObjectsFollowThePrimary switches a MySQL of two instances over to
// its second: its objects are Ready against the new primary, and drift is
// undone there.
func TestSQLObjectsFollowThePrimary(t *testing.T) {
	startSQLManager(t, sqlTestDrift)
	ctx := context.Background()
	ns := eventsOnFailure(t, env.NewNamespace(t))
	m := ctrltest.NewMySQL(ns, "db", 2)
	env.Create(t, m)
	env.MarkStatefulSetReady(t, client.ObjectKey{Namespace: ns, Name: "db"})
	env.MarkPDBReady(t, client.ObjectKey{Namespace: ns, Name: "db"})
	servers := env.ServePods(t, m, 0, 2)
	env.WaitKstatus(t, client.ObjectKeyFromObject(m), status.CurrentStatus)
	user := &databasev1.MySQLUser{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: ns},
		Spec: databasev1.MySQLUserSpec{MySQLRef: ref(), PasswordSecretRef: databasev1.PasswordSecretReference{Name: "pw"}}}
	grant := &databasev1.MySQLGrant{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: ns},
		Spec: databasev1.MySQLGrantSpec{MySQLRef: ref(), User: "app", Database: "app", Privileges: []databasev1.Privilege{"SELECT"}}}
	mustCreate(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "pw", Namespace: ns}, Data: map[string][]byte{"password": []byte("pw")}}, user, grant)
	waitObject(t, user, status.CurrentStatus)
	waitObject(t, grant, status.CurrentStatus)

	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(m), m); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(m.DeepCopy())
	m.Spec.PreferredPrimary = ptr.To[int32](1)
	if err := env.Client.Patch(ctx, m, patch); err != nil {
		t.Fatal(err)
	}
	for _, o := range []sqlObject{user, grant} {
		ctrltest.Eventually(t, o.GetName()+" Ready on db-1", func(ctx context.Context) (bool, error) {
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(o), o); err != nil {
				return false, err
			}
			return conditions.IsReady(o) && strings.HasSuffix(conditions.GetMessage(o, databasev1.ConditionReady), "on the primary db-1"), nil
		})
	}
	mustExec(t, rootOf(t, m, servers[1].Addr()), "DROP USER 'app'@'%'")
	for i, s := range servers {
		root := rootOf(t, m, s.Addr())
		ctrltest.Eventually(t, fmt.Sprintf("the account and its grant back on db-%d", i), func(ctx context.Context) (bool, error) {
			g, err := grantsOf(ctx, root, "app", "%")
			if errors.Is(err, mysql.ErrInvalidConn) {
				// For a few seconds after the switchover the operator ends
				// the client connections of the old primary, db-0, this
				// test's own among them: ask again on a new one.
				return false, nil
			}
			return strings.Contains(g, "GRANT SELECT ON `app`.*"), err
		})
	}
}

// eventsOnFailure logs the events of namespace ns when the test fails, and
// returns ns.
func eventsOnFailure(t *testing.T, ns string) string {
	t.Cleanup(func() {
		if t.Failed() {
			logEvents(t, ns)
		}
	})
	return ns
}
