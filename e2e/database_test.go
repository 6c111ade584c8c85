package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/controller/vocabulary"
	"github.com/example/mysql-operator/internal/testenv"
)

// TestDatabaseRuns runs a MariaDB on the real node: it goes Ready through
// the kubelet's probes of the agent, a client logs in through the client
// Service with the generated password and writes a row, and a deleted pod
// comes back with the row.
func TestDatabaseRuns(t *testing.T) {
	ctx := context.Background()
	ns := testenv.NewNamespace(t, c.Client)
	createMySQL(t, ns, "db", 1)
	waitCurrent(t, key(ns, "db"))
	pod := &corev1.Pod{}
	if err := c.Client.Get(ctx, key(ns, "db-0"), pod); err != nil {
		t.Fatal(err)
	}
	if pod.Spec.NodeName != "real-node" || pod.Spec.Containers[0].ReadinessProbe == nil || !ready(pod) {
		t.Fatalf("pod db-0 on %q, probe %v, ready %t: want a Ready pod on the real node with a readiness probe", pod.Spec.NodeName, pod.Spec.Containers[0].ReadinessProbe, ready(pod))
	}
	db := rootDB(t, ns, "db", "db")
	mustExec(t, db, "CREATE DATABASE app")
	mustExec(t, db, "CREATE TABLE app.t (id INT PRIMARY KEY, v VARCHAR(16))")
	mustExec(t, db, "INSERT INTO app.t VALUES (1, 'durable')")

	uid := pod.UID
	if err := c.Client.Delete(ctx, pod); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a new pod db-0, Ready", func(ctx context.Context) (bool, error) {
		err := c.Client.Get(ctx, key(ns, "db-0"), pod)
		return err == nil && pod.UID != uid && ready(pod), client.IgnoreNotFound(err)
	})
	waitCurrent(t, key(ns, "db"))
	var v string
	if err := rootDB(t, ns, "db", "db").QueryRow("SELECT v FROM app.t WHERE id = 1").Scan(&v); err != nil || v != "durable" {
		t.Fatalf("row after the pod came back = %q, %v", v, err)
	}
}

// TestStuckPodsSayWhy makes a MySQL whose image cannot be pulled, one
// whose pod fits no node, one whose StorageClass does not exist, one whose
// server refuses its config and one whose image runs another engine: each
// goes Stalled (the manager's --stall-after is short here; a crash loop
// stalls once its back-off is longer) with a message naming the pod and
// the reason, the server's own error line where it has one.
func TestStuckPodsSayWhy(t *testing.T) {
	ctx := context.Background()
	ns := testenv.NewNamespace(t, c.Client)
	noImage := &databasev1.MySQL{ObjectMeta: metav1.ObjectMeta{Name: "noimage", Namespace: ns}, Spec: realNodeSpec(1)}
	noImage.Spec.Image = "localhost/does-not-exist:1"
	noNode := &databasev1.MySQL{ObjectMeta: metav1.ObjectMeta{Name: "nonode", Namespace: ns}, Spec: realNodeSpec(1)}
	noNode.Spec.NodeSelector = map[string]string{"disktype": "none-has-it"}
	noClass := &databasev1.MySQL{ObjectMeta: metav1.ObjectMeta{Name: "noclass", Namespace: ns}, Spec: realNodeSpec(1)}
	noClass.Spec.StorageClassName = ptr.To("does-not-exist")
	badConfig := &databasev1.MySQL{ObjectMeta: metav1.ObjectMeta{Name: "badconfig", Namespace: ns}, Spec: realNodeSpec(1)}
	badConfig.Spec.Config = map[string]databasev1.ConfigValue{"innodb_buffer_pool_sise": "64M"}
	wrongEngine := &databasev1.MySQL{ObjectMeta: metav1.ObjectMeta{Name: "wrongengine", Namespace: ns}, Spec: realNodeSpec(1)}
	wrongEngine.Spec.Engine, wrongEngine.Spec.Version = databasev1.EngineMySQL, "8.4"
	for _, m := range []*databasev1.MySQL{noImage, noNode, noClass, badConfig, wrongEngine} {
		if err := c.Client.Create(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct{ name, reason, says string }{
		{"noimage", vocabulary.ReasonImagePullFailed, "pod noimage-0, container init: "},
		{"nonode", vocabulary.ReasonPodUnschedulable, "pod nonode-0 cannot be scheduled"},
		{"noclass", vocabulary.ReasonStorageClassNotFound, "its claim data-noclass-0 names StorageClass does-not-exist"},
		// The server's own last error line, from the end of its log.
		{"badconfig", vocabulary.ReasonContainerFailing, "[ERROR] mariadbd: unknown variable 'innodb_buffer_pool_sise=64M'"},
		// What the image runs instead.
		{"wrongengine", vocabulary.ReasonContainerFailing, "the image's server is MariaDB 10.11"},
	} {
		testenv.WaitKstatus(t, c.Client, key(ns, tt.name), status.FailedStatus, timeout)
		m := &databasev1.MySQL{}
		if err := c.Client.Get(ctx, key(ns, tt.name), m); err != nil {
			t.Fatal(err)
		}
		stalled := condition(m, databasev1.ConditionStalled)
		if stalled == nil || stalled.Reason != tt.reason || !strings.Contains(stalled.Message, tt.says) {
			t.Errorf("%s: Stalled = %+v, want reason %s saying %q", tt.name, stalled, tt.reason, tt.says)
		}
	}
}

// TestClaimBindingIsNotAStall makes a MySQL whose claim binds immediately
// but that no provisioner serves: past --stall-after it is still in
// progress, and says which claim it waits for (a claim can take minutes to
// bind when a provisioner works through many).
func TestClaimBindingIsNotAStall(t *testing.T) {
	ctx := context.Background()
	ns := testenv.NewNamespace(t, c.Client)
	sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "unserved-" + ns}, Provisioner: "unserved.example.com",
		VolumeBindingMode: ptr.To(storagev1.VolumeBindingImmediate)}
	if err := c.Client.Create(ctx, sc); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Client.Delete(context.Background(), sc) })
	m := &databasev1.MySQL{ObjectMeta: metav1.ObjectMeta{Name: "unbound", Namespace: ns}, Spec: realNodeSpec(1)}
	m.Spec.StorageClassName = ptr.To(sc.Name)
	if err := c.Client.Create(ctx, m); err != nil {
		t.Fatal(err)
	}
	says := "waits for its claim data-unbound-0 to be bound (StorageClass " + sc.Name + ")"
	pod := &corev1.Pod{}
	eventually(t, "the MySQL saying which claim it waits for, its pod unschedulable for longer than --stall-after", func(ctx context.Context) (bool, error) {
		if err := c.Client.Get(ctx, key(ns, "unbound"), m); err != nil {
			return false, err
		}
		if err := c.Client.Get(ctx, key(ns, "unbound-0"), pod); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		r := condition(m, databasev1.ConditionReconciling)
		for _, pc := range pod.Status.Conditions {
			if pc.Type == corev1.PodScheduled && pc.Status == corev1.ConditionFalse {
				return r != nil && strings.Contains(r.Message, says) && time.Since(pc.LastTransitionTime.Time) > stallAfter+5*time.Second, nil
			}
		}
		return false, nil
	})
	if s := condition(m, databasev1.ConditionStalled); s != nil {
		t.Fatalf("Stalled = %+v while the claim is being bound", s)
	}
	testenv.WaitKstatus(t, c.Client, key(ns, "unbound"), status.InProgressStatus, timeout)
}

// ready says whether the pod's Ready condition is True.
func ready(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// condition returns the condition of type t of m, or nil.
func condition(m *databasev1.MySQL, t string) *metav1.Condition {
	for i := range m.Status.Conditions {
		if m.Status.Conditions[i].Type == t {
			return &m.Status.Conditions[i]
		}
	}
	return nil
}
