package e2e

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/controller/children"
	"github.com/example/mysql-operator/controller/vocabulary"
	"github.com/example/mysql-operator/dbop"
	"github.com/example/mysql-operator/internal/testenv"
)

// TestErrantReplica writes a row on a replica behind the operator's back,
// as a DBA with the admin account could: the replica is reported errant in
// status, leaves the replicas' Service and is not repaired. The DBA's
// repair, deleting its claim and its pod, re-seeds it from the primary:
// it comes back a replica with the primary's rows and without the errant one.
func TestErrantReplica(t *testing.T) {
	ctx := context.Background()
	ns := testenv.NewNamespace(t, c.Client)
	createMySQL(t, ns, "db", 3)
	waitCurrent(t, key(ns, "db"))
	primary := rootDB(t, ns, "db", "db-primary")
	writeItems(t, primary)
	admin := adminDB(t, ns, "db", "db-2")
	waitRows(t, admin, "db-2", 3)
	// The admin account may write on a read-only replica (it keeps
	// READ_ONLY ADMIN so the operator can promote): this is the errant write.
	mustExec(t, admin, "INSERT INTO shop.items VALUES (100)")

	eventually(t, "db-2 reported errant and out of the replicas' Service", func(ctx context.Context) (bool, error) {
		m := getMySQL(t, ns, "db")
		s := condition(m, databasev1.ConditionStalled)
		if s == nil || s.Status != metav1.ConditionTrue || s.Reason != vocabulary.ReasonErrantTransactions {
			return false, nil
		}
		if in := instance(m, "db-2"); in == nil || in.Role != databasev1.RoleErrant {
			return false, nil
		}
		in, err := inService(ctx, ns, "db-replicas", "db-2")
		return !in, err
	})
	pod := &corev1.Pod{}
	if err := c.Client.Get(ctx, key(ns, "db-2"), pod); err != nil {
		t.Fatal(err)
	}
	if role, ok := pod.Labels[vocabulary.LabelRole]; ok {
		t.Errorf("errant pod db-2 carries role %q, want none", role)
	}
	var n int
	if err := admin.QueryRow("SELECT COUNT(*) FROM shop.items WHERE id = 100").Scan(&n); err != nil || n != 1 {
		t.Errorf("the errant row on db-2: %d, %v; want it left as it is", n, err)
	}

	// The repair: the replica's data thrown away, its pod deleted.
	reseed(t, ns, "db-2")
	waitCurrent(t, key(ns, "db"))
	if in := instance(getMySQL(t, ns, "db"), "db-2"); in == nil || in.Role != databasev1.RoleReplica {
		t.Fatalf("db-2 after its re-seed: %+v, want a replica", in)
	}
	admin = adminDB(t, ns, "db", "db-2")
	waitRows(t, admin, "db-2", 3)
	mustExec(t, primary, "INSERT INTO shop.items VALUES (4)")
	waitRows(t, admin, "db-2", 4)
	eventually(t, "db-2 back in the replicas' Service", func(ctx context.Context) (bool, error) {
		return inService(ctx, ns, "db-replicas", "db-2")
	})
}

// TestScaleWithData scales a MySQL holding rows 3 -> 5 -> 3: the new
// replicas are seeded with the rows and replicate; with the primary on an
// instance the scale-in removes, the primary is switched over to one that
// stays before the StatefulSet shrinks, and no acknowledged write of a
// writer running across it is lost.
func TestScaleWithData(t *testing.T) {
	ctx := context.Background()
	ns := testenv.NewNamespace(t, c.Client)
	m := createMySQL(t, ns, "db", 3)
	waitCurrent(t, key(ns, "db"))
	primary := rootDB(t, ns, "db", "db-primary")
	writeItems(t, primary)

	kubectl(t, "scale", "-n", ns, "my/db", "--replicas=5")
	waitCurrent(t, key(ns, "db"))
	mustExec(t, primary, "INSERT INTO shop.items VALUES (4)")
	for _, pod := range []string{"db-3", "db-4"} {
		waitRows(t, adminDB(t, ns, "db", pod), pod, 4)
	}

	if err := c.Client.Get(ctx, key(ns, "db"), m); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(m.DeepCopy())
	m.Spec.PreferredPrimary = ptrInt32(4)
	if err := c.Client.Patch(ctx, m, patch); err != nil {
		t.Fatal(err)
	}
	eventually(t, "db-4 to be the primary", func(ctx context.Context) (bool, error) {
		return getMySQL(t, ns, "db").Status.CurrentPrimary == "db-4", nil
	})
	waitCurrent(t, key(ns, "db"))
	eventually(t, "a write through the primary's Service", func(ctx context.Context) (bool, error) {
		// The Service follows the role label once kube-proxy has the
		// new endpoints; until then it may reach the old primary.
		_, err := primary.ExecContext(ctx, "INSERT IGNORE INTO shop.items VALUES (5)")
		return err == nil, nil
	})

	w := startWriter(t, ns, "db")
	eventually(t, "a few writes", func(context.Context) (bool, error) { return w.count() > 20, nil })
	patch = client.RawPatch(client.Merge.Type(), []byte(`{"spec":{"replicas":3,"preferredPrimary":null}}`))
	if err := c.Client.Patch(ctx, m, patch); err != nil {
		t.Fatal(err)
	}
	eventually(t, "3 running pods, the primary among them", func(ctx context.Context) (bool, error) {
		n, err := runningPods(ctx, ns, "db")
		p := podIndexOf(getMySQL(t, ns, "db").Status.CurrentPrimary)
		return n == 3 && p >= 0 && p < 3, err
	})
	waitCurrent(t, key(ns, "db"))
	w.finish(t, ns, "db", time.Now())
	if got := getMySQL(t, ns, "db"); len(got.Status.Instances) != 3 {
		t.Errorf("instances after the scale-in: %+v, want 3", got.Status.Instances)
	}
}

// adminDB logs in to one pod of a MySQL as the operator's admin account,
// with the password from the Secret the operator keeps for the MySQL.
func adminDB(t *testing.T, ns, name, pod string) *sql.DB {
	t.Helper()
	s := &corev1.Secret{}
	if err := c.Client.Get(context.Background(), key(ns, children.OperatorSecretName(&databasev1.MySQL{
		ObjectMeta: metav1.ObjectMeta{Name: name}})), s); err != nil {
		t.Fatal(err)
	}
	return podDB(t, ns, pod, dbop.AdminUser, string(s.Data["admin"]))
}

// writeItems creates shop.items through db and writes rows 1, 2 and 3.
func writeItems(t *testing.T, db *sql.DB) {
	t.Helper()
	mustExec(t, db, "CREATE DATABASE shop")
	mustExec(t, db, "CREATE TABLE shop.items (id INT PRIMARY KEY)")
	mustExec(t, db, "INSERT INTO shop.items VALUES (1), (2), (3)")
}

// waitRows waits until shop.items on db holds n rows.
func waitRows(t *testing.T, db *sql.DB, pod string, n int) {
	t.Helper()
	eventually(t, fmt.Sprintf("%d rows on %s", n, pod), func(ctx context.Context) (bool, error) {
		var have int
		err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM shop.items WHERE id < 100").Scan(&have)
		return err == nil && have == n, nil
	})
}

// instance returns the status of the named instance, or nil.
func instance(m *databasev1.MySQL, pod string) *databasev1.InstanceStatus {
	for i := range m.Status.Instances {
		if m.Status.Instances[i].Name == pod {
			return &m.Status.Instances[i]
		}
	}
	return nil
}

// inService says whether a pod's address is a ready endpoint of a Service.
func inService(ctx context.Context, ns, service, pod string) (bool, error) {
	slices := &discoveryv1.EndpointSliceList{}
	if err := c.Client.List(ctx, slices, client.InNamespace(ns), client.MatchingLabels{discoveryv1.LabelServiceName: service}); err != nil {
		return false, err
	}
	for _, s := range slices.Items {
		for _, e := range s.Endpoints {
			if e.TargetRef != nil && e.TargetRef.Name == pod && (e.Conditions.Ready == nil || *e.Conditions.Ready) {
				return true, nil
			}
		}
	}
	return false, nil
}

// reseed deletes an instance's data claim and then its pod, as a DBA
// throwing a replica's data away does: the StatefulSet recreates both, the
// claim empty.
func reseed(t *testing.T, ns, pod string) {
	t.Helper()
	ctx := context.Background()
	pvc := &corev1.PersistentVolumeClaim{}
	if err := c.Client.Get(ctx, key(ns, "data-"+pod), pvc); err != nil {
		t.Fatal(err)
	}
	old := pvc.UID
	if err := c.Client.Delete(ctx, pvc); err != nil {
		t.Fatal(err)
	}
	if err := c.Client.Delete(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: pod}}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a new claim for "+pod, func(ctx context.Context) (bool, error) {
		err := c.Client.Get(ctx, key(ns, "data-"+pod), pvc)
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil && pvc.UID != old, err
	})
}

// podIndexOf returns the ordinal of a pod of the MySQL db, or -1.
func podIndexOf(pod string) int {
	i, err := strconv.Atoi(strings.TrimPrefix(pod, "db-"))
	if err != nil || !strings.HasPrefix(pod, "db-") {
		return -1
	}
	return i
}
