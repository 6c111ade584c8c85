package e2e

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/controller"
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

// TestStuckPodsSayWhy makes a MySQL whose image cannot be pulled and one
// whose pod fits no node: each goes Stalled (the manager's --stall-after
// is short here) with a message naming the pod and the reason.
func TestStuckPodsSayWhy(t *testing.T) {
	ctx := context.Background()
	ns := testenv.NewNamespace(t, c.Client)
	noImage := &databasev1.MySQL{ObjectMeta: metav1.ObjectMeta{Name: "noimage", Namespace: ns}, Spec: realNodeSpec(1)}
	noImage.Spec.Image = "localhost/does-not-exist:1"
	noNode := &databasev1.MySQL{ObjectMeta: metav1.ObjectMeta{Name: "nonode", Namespace: ns}, Spec: realNodeSpec(1)}
	noNode.Spec.NodeSelector = map[string]string{"disktype": "none-has-it"}
	for _, m := range []*databasev1.MySQL{noImage, noNode} {
		if err := c.Client.Create(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct{ name, reason, says string }{
		{"noimage", controller.ReasonImagePullFailed, "pod noimage-0, container init: "},
		{"nonode", controller.ReasonPodUnschedulable, "pod nonode-0 cannot be scheduled"},
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
