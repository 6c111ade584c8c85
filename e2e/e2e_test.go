package e2e

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/internal/cluster"
	"github.com/example/mysql-operator/internal/testenv"
)

// createMySQL creates a MariaDB MySQL whose servers run on the real node.
func createMySQL(t *testing.T, ns, name string, replicas int32) *databasev1.MySQL {
	t.Helper()
	m := &databasev1.MySQL{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: realNodeSpec(replicas)}
	if err := c.Client.Create(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	return m
}

// realNodeSpec is the spec of a MySQL of replicas on the real node
// (cluster.RealNodeSpec). E2E_ENGINE, E2E_VERSION and E2E_IMAGE replace the
// engine, version and image, for a machine whose containerd can pull from a
// registry (e.g. MySQL, 8.4, docker.io/library/mysql:8.4).
func realNodeSpec(replicas int32) databasev1.MySQLSpec {
	spec := cluster.RealNodeSpec(replicas)
	if e := os.Getenv("E2E_ENGINE"); e != "" {
		spec.Engine, spec.Version, spec.Image = databasev1.Engine(e), os.Getenv("E2E_VERSION"), os.Getenv("E2E_IMAGE")
	}
	return spec
}

// onRealNode sets the real node's spec fields in an object applied from
// kustomize, as a GitOps overlay for this cluster would.
func onRealNode(t *testing.T, u *unstructured.Unstructured) {
	t.Helper()
	spec, err := runtime.DefaultUnstructuredConverter.ToUnstructured(ptr.To(realNodeSpec(1)))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"image", "storageClassName", "storageSize", "nodeSelector", "tolerations"} {
		if err := unstructured.SetNestedField(u.Object, spec[f], "spec", f); err != nil {
			t.Fatal(err)
		}
	}
}

func waitCurrent(t *testing.T, k client.ObjectKey) {
	t.Helper()
	testenv.WaitKstatus(t, c.Client, k, status.CurrentStatus, timeout)
}

// runningPods counts the Running and Ready pods of a MySQL.
func runningPods(ctx context.Context, ns, name string) (int, error) {
	pods := &corev1.PodList{}
	if err := c.Client.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels{"app.kubernetes.io/instance": name}); err != nil {
		return 0, err
	}
	n := 0
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
			n++
		}
	}
	return n, nil
}

// TestGitOpsRollout applies the dev overlay's sample the way Flux would and
// waits for it with kstatus and with `kubectl wait`.
func TestGitOpsRollout(t *testing.T) {
	ns := testenv.NewNamespace(t, c.Client)
	samples, err := clusterBuild("kustomize/overlays/dev/databases")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range samples {
		s.SetNamespace(ns)
		onRealNode(t, s)
	}
	if err := clusterApply(samples); err != nil {
		t.Fatal(err)
	}
	waitCurrent(t, key(ns, "sample"))
	kubectl(t, "wait", "-n", ns, "--for=condition=Ready", "my/sample", "--timeout=60s")
	n, err := runningPods(context.Background(), ns, "sample")
	if err != nil || n != 3 {
		t.Fatalf("running pods = %d (%v), want 3", n, err)
	}
}

// TestScale scales 3 -> 5 -> 1 through the scale subresource: pods follow,
// the PDB is there with several replicas and pruned at one.
func TestScale(t *testing.T) {
	ctx := context.Background()
	ns := testenv.NewNamespace(t, c.Client)
	createMySQL(t, ns, "db", 3)
	waitCurrent(t, key(ns, "db"))
	for _, replicas := range []int{5, 1} {
		kubectl(t, "scale", "-n", ns, "my/db", fmt.Sprintf("--replicas=%d", replicas))
		eventually(t, fmt.Sprintf("%d running pods", replicas), func(ctx context.Context) (bool, error) {
			n, err := runningPods(ctx, ns, "db")
			return n == replicas, err
		})
		waitCurrent(t, key(ns, "db"))
		m := &databasev1.MySQL{}
		if err := c.Client.Get(ctx, key(ns, "db"), m); err != nil {
			t.Fatal(err)
		}
		if int(m.Status.ReadyReplicas) != replicas || m.Status.Phase != databasev1.PhaseRunning {
			t.Errorf("status after scaling to %d: ready=%d phase=%s", replicas, m.Status.ReadyReplicas, m.Status.Phase)
		}
		err := c.Client.Get(ctx, key(ns, "db"), &policyv1.PodDisruptionBudget{})
		if replicas > 1 && err != nil {
			t.Errorf("no PDB at %d replicas: %v", replicas, err)
		}
		if replicas == 1 && !apierrors.IsNotFound(err) {
			t.Errorf("PDB not pruned at 1 replica: %v", err)
		}
	}
}

// TestConfigChange changes spec.config: the StatefulSet rolls to a new
// revision and no other child is rewritten.
func TestConfigChange(t *testing.T) {
	ctx := context.Background()
	ns := testenv.NewNamespace(t, c.Client)
	m := createMySQL(t, ns, "db", 2)
	waitCurrent(t, key(ns, "db"))
	unchanged := []client.Object{
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "db-root"}},
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "db"}},
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "db-headless"}},
	}
	versions := map[string]string{}
	for _, o := range unchanged {
		if err := c.Client.Get(ctx, key(ns, o.GetName()), o); err != nil {
			t.Fatal(err)
		}
		versions[fmt.Sprintf("%T/%s", o, o.GetName())] = o.GetResourceVersion()
	}
	pdb := &policyv1.PodDisruptionBudget{}
	sts := &appsv1.StatefulSet{}
	if err := c.Client.Get(ctx, key(ns, "db"), pdb); err != nil {
		t.Fatal(err)
	}
	if err := c.Client.Get(ctx, key(ns, "db"), sts); err != nil {
		t.Fatal(err)
	}
	pdbGeneration, revision := pdb.Generation, sts.Status.UpdateRevision

	if err := c.Client.Get(ctx, key(ns, "db"), m); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(m.DeepCopy())
	m.Spec.Config["max_connections"] = "300"
	if err := c.Client.Patch(ctx, m, patch); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the StatefulSet to roll to a new revision", func(ctx context.Context) (bool, error) {
		if err := c.Client.Get(ctx, key(ns, "db"), sts); err != nil {
			return false, err
		}
		s := sts.Status
		return s.UpdateRevision != revision && s.CurrentRevision == s.UpdateRevision && s.UpdatedReplicas == 2, nil
	})
	waitCurrent(t, key(ns, "db"))
	cm := &corev1.ConfigMap{}
	if err := c.Client.Get(ctx, key(ns, "db-config"), cm); err != nil {
		t.Fatal(err)
	}
	if got := cm.Data["my.cnf"]; !strings.Contains(got, "\nmax_connections = 300\n") {
		t.Errorf("my.cnf = %q", got)
	}
	if got := serverVariable(t, ns, "db", "max_connections"); got != "300" {
		t.Errorf("the running primary reports max_connections = %s, want 300", got)
	}
	for _, o := range unchanged {
		if err := c.Client.Get(ctx, key(ns, o.GetName()), o); err != nil {
			t.Fatal(err)
		}
		if k := fmt.Sprintf("%T/%s", o, o.GetName()); o.GetResourceVersion() != versions[k] {
			t.Errorf("%s was rewritten by a config change", k)
		}
	}
	if err := c.Client.Get(ctx, key(ns, "db"), pdb); err != nil {
		t.Fatal(err)
	}
	if pdb.Generation != pdbGeneration {
		t.Errorf("the PDB's spec was rewritten by a config change")
	}
}

// TestDeleteKeepsVolumes deletes a MySQL: the garbage collector removes its
// children; its volumes stay, and so do the Secrets of the passwords that
// open them (volumeDeletionPolicy Retain). A MySQL created again under the
// same name comes up on them with its rows, and the root password works.
func TestDeleteKeepsVolumes(t *testing.T) {
	ctx := context.Background()
	ns := testenv.NewNamespace(t, c.Client)
	m := createMySQL(t, ns, "db", 2)
	waitCurrent(t, key(ns, "db"))
	db := rootDB(t, ns, "db", "db")
	mustExec(t, db, "CREATE DATABASE shop")
	mustExec(t, db, "CREATE TABLE shop.orders (id INT PRIMARY KEY, item VARCHAR(32))")
	mustExec(t, db, "INSERT INTO shop.orders VALUES (1, 'kept')")
	password := rootPasswordOf(t, ns, "db")
	if err := c.Client.Delete(ctx, m); err != nil {
		t.Fatal(err)
	}
	children := []client.Object{
		&appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "db"}},
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "db"}},
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "db-headless"}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "db-config"}},
		&policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "db"}},
	}
	for _, obj := range children {
		name := obj.GetName()
		eventually(t, fmt.Sprintf("%T %s to be garbage-collected", obj, name), func(ctx context.Context) (bool, error) {
			err := c.Client.Get(ctx, key(ns, name), obj)
			return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
		})
	}
	eventually(t, "the pods to be gone", func(ctx context.Context) (bool, error) {
		pods := &corev1.PodList{}
		err := c.Client.List(ctx, pods, client.InNamespace(ns))
		return len(pods.Items) == 0, err
	})
	pvcs := &corev1.PersistentVolumeClaimList{}
	if err := c.Client.List(ctx, pvcs, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(pvcs.Items) != 2 {
		t.Fatalf("%d PVCs left after deleting the MySQL, want 2 (volumes are retained)", len(pvcs.Items))
	}
	for _, p := range pvcs.Items {
		if p.DeletionTimestamp != nil {
			t.Errorf("PVC %s is being deleted", p.Name)
		}
	}
	for _, name := range []string{"db-root", "db-operator"} {
		if err := c.Client.Get(ctx, key(ns, name), &corev1.Secret{}); err != nil {
			t.Errorf("Secret %s, which opens the retained volumes, is gone: %v", name, err)
		}
	}

	createMySQL(t, ns, "db", 2)
	waitCurrent(t, key(ns, "db"))
	if got := rootPasswordOf(t, ns, "db"); got != password {
		t.Fatal("the root password changed: the retained data would not open")
	}
	var item string
	if err := rootDB(t, ns, "db", "db").QueryRow("SELECT item FROM shop.orders WHERE id = 1").Scan(&item); err != nil || item != "kept" {
		t.Fatalf("row after re-creating the MySQL = %q, %v; want kept", item, err)
	}
}

// TestForeignFieldManager changes an owned field as kubectl would: the
// operator takes it back, and leaves alone an annotation it does not own.
func TestForeignFieldManager(t *testing.T) {
	ns := testenv.NewNamespace(t, c.Client)
	createMySQL(t, ns, "db", 1)
	waitCurrent(t, key(ns, "db"))
	kubectl(t, "annotate", "-n", ns, "statefulset/db", "team.example.com/owner=dba")
	kubectl(t, "patch", "-n", ns, "statefulset/db", "--type=json", `-p=[{"op":"replace","path":"/spec/template/spec/containers/0/image","value":"localhost/evil:1"}]`)
	sts := &appsv1.StatefulSet{}
	eventually(t, "the image to be taken back", func(ctx context.Context) (bool, error) {
		if err := c.Client.Get(ctx, key(ns, "db"), sts); err != nil {
			return false, err
		}
		return sts.Spec.Template.Spec.Containers[0].Image == cluster.MariaDBImage, nil
	})
	if sts.Annotations["team.example.com/owner"] != "dba" {
		t.Error("the operator removed an annotation it does not own")
	}
	waitCurrent(t, key(ns, "db"))
}
