package mysql

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/controller/children"
	"github.com/example/mysql-operator/controller/vocabulary"
	"github.com/example/mysql-operator/internal/ctrltest"
)

// TestStatusWriterHold checks the progress interval of the status writer.
func TestStatusWriterHold(t *testing.T) {
	now := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	w := newStatusWriter(nil, 5*time.Second)
	w.now = func() time.Time { return now }
	a, b := types.NamespacedName{Namespace: "ns", Name: "a"}, types.NamespacedName{Namespace: "ns", Name: "b"}
	objA := &databasev1.MySQL{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a", ResourceVersion: "7"}}

	if got := w.hold(a); got != 5*time.Second {
		t.Fatalf("first hold = %s, want the whole interval", got)
	}
	now = now.Add(2 * time.Second)
	if got := w.hold(a); got != 3*time.Second {
		t.Fatalf("hold after 2s = %s, want 3s", got)
	}
	if got := w.hold(b); got != 5*time.Second {
		t.Fatalf("another MySQL shares the interval: hold = %s", got)
	}
	now = now.Add(3 * time.Second)
	if got := w.hold(a); got != 0 {
		t.Fatalf("hold after the interval = %s, want 0", got)
	}
	w.wrote(objA, true)
	if got := w.hold(a); got != 5*time.Second {
		t.Fatalf("hold right after a write = %s, want the interval again", got)
	}
	w.wrote(objA, false)
	if w.tracking(a) {
		t.Fatal("a MySQL written out of progress is still tracked")
	}
	w.stopTracking(b)
	if w.tracking(b) {
		t.Fatal("b is still tracked")
	}
	w.forget(a)
	if len(w.byKey) != 0 {
		t.Fatalf("writer still remembers %v", w.byKey)
	}
	if got := newStatusWriter(nil, 0).hold(a); got != 0 {
		t.Fatalf("interval 0 holds for %s", got)
	}
}

// TestStatusDetails shows which in-progress changes are details, written
// only dataInterval after the last write, and which change the shape.
func TestStatusDetails(t *testing.T) {
	base := databasev1.MySQLStatus{ObservedGeneration: 2, Phase: databasev1.PhasePending, Replicas: 1, ReadyReplicas: 1,
		Conditions: []metav1.Condition{{Type: databasev1.ConditionReconciling, Status: metav1.ConditionTrue, Reason: vocabulary.ReasonProgressing, Message: "1/2"}},
		Instances:  []databasev1.InstanceStatus{{Name: "db-1", Role: databasev1.RoleUnknown, Message: "pod does not exist"}}}
	tests := []struct {
		name   string
		change func(*databasev1.MySQLStatus)
		detail bool
	}{
		{"pods created", func(s *databasev1.MySQLStatus) { s.Replicas = 2 }, true},
		{"instance message", func(s *databasev1.MySQLStatus) { s.Instances[0].Message = "server not started" }, true},
		{"condition message", func(s *databasev1.MySQLStatus) { s.Conditions[0].Message = "other" }, true},
		{"ready replicas", func(s *databasev1.MySQLStatus) { s.ReadyReplicas = 2 }, true},
		{"role", func(s *databasev1.MySQLStatus) { s.Instances[0].Role = databasev1.RoleReplica }, true},
		{"instance added", func(s *databasev1.MySQLStatus) {
			s.Instances = append(s.Instances, databasev1.InstanceStatus{Name: "db-0"})
		}, true},
		{"reason", func(s *databasev1.MySQLStatus) { s.Conditions[0].Reason = vocabulary.ReasonPodUnschedulable }, false},
		{"condition status", func(s *databasev1.MySQLStatus) { s.Conditions[0].Status = metav1.ConditionFalse }, false},
		{"primary", func(s *databasev1.MySQLStatus) { s.CurrentPrimary = "db-1" }, false},
		{"phase", func(s *databasev1.MySQLStatus) { s.Phase = databasev1.PhaseRunning }, false},
		{"generation", func(s *databasev1.MySQLStatus) { s.ObservedGeneration = 3 }, false},
	}
	for _, tt := range tests {
		changed := base.DeepCopy()
		tt.change(changed)
		if got := sameShape(&base, changed, true); got != tt.detail {
			t.Errorf("%s: sameShape = %t, want %t", tt.name, got, tt.detail)
		}
	}
	// Out of progress only the instances' data are details: a stall's
	// message names its cause.
	outOfProgress := []struct {
		name   string
		change func(*databasev1.MySQLStatus)
		detail bool
	}{
		{"instance GTIDs", func(s *databasev1.MySQLStatus) { s.Instances[0].GTIDExecuted = "0-1-9" }, true},
		{"instance lag", func(s *databasev1.MySQLStatus) { s.Instances[0].LagSeconds = ptr.To[int64](3) }, true},
		{"instance message", func(s *databasev1.MySQLStatus) { s.Instances[0].Message = "server not started" }, true},
		{"condition message", func(s *databasev1.MySQLStatus) { s.Conditions[0].Message = "other" }, false},
		{"pods created", func(s *databasev1.MySQLStatus) { s.Replicas = 2 }, false},
		{"ready replicas", func(s *databasev1.MySQLStatus) { s.ReadyReplicas = 2 }, false},
		{"role", func(s *databasev1.MySQLStatus) { s.Instances[0].Role = databasev1.RoleReplica }, false},
	}
	for _, tt := range outOfProgress {
		changed := base.DeepCopy()
		tt.change(changed)
		if got := sameShape(&base, changed, false); got != tt.detail {
			t.Errorf("out of progress, %s: sameShape = %t, want %t", tt.name, got, tt.detail)
		}
	}

	now := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	w := newStatusWriter(nil, 5*time.Second)
	w.now = func() time.Time { return now }
	key := types.NamespacedName{Namespace: "ns", Name: "a"}
	if got := w.detailWait(key, dataInterval); got != 0 {
		t.Fatalf("detail wait of a MySQL never written = %s, want 0 (the progress interval holds it)", got)
	}
	w.wrote(&databasev1.MySQL{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a", ResourceVersion: "7"}}, true)
	now = now.Add(20 * time.Second)
	if got := w.detailWait(key, dataInterval); got != dataInterval-20*time.Second {
		t.Fatalf("detail wait 20s after a write = %s, want %s", got, dataInterval-20*time.Second)
	}

	// A Ready MySQL whose only change is its primary's GTIDs is not
	// written (the writer has no client: a write would panic) until
	// dataInterval has passed since the last write.
	ready := &databasev1.MySQL{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a", Generation: 1, ResourceVersion: "8"},
		Status: databasev1.MySQLStatus{ObservedGeneration: 1, Phase: databasev1.PhaseRunning, ReadyReplicas: 1,
			Conditions: []metav1.Condition{{Type: databasev1.ConditionReady, Status: metav1.ConditionTrue, Reason: vocabulary.ReasonSucceeded}},
			Instances:  []databasev1.InstanceStatus{{Name: "a-0", Role: databasev1.RolePrimary, Ready: true, GTIDExecuted: "0-1-5"}}}}
	want := *ready.Status.DeepCopy()
	want.Instances[0].GTIDExecuted = "0-1-9"
	if wait, wrote, err := w.write(context.Background(), ready, want); err != nil || wrote || wait != dataInterval-20*time.Second {
		t.Fatalf("write of new GTIDs alone: wait %s, wrote %t, %v; want %s, not written", wait, wrote, err, dataInterval-20*time.Second)
	}

	// In progress, a new ready count or condition message waits
	// dataInterval after the last write; a new count of pods or instance
	// alone waits staleInterval.
	rolling := &databasev1.MySQL{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a", Generation: 2, ResourceVersion: "8"}, Status: base}
	rolling.Status.ObservedGeneration = 2
	now = now.Add(5 * time.Second) // past the progress interval
	for _, tt := range []struct {
		name   string
		change func(*databasev1.MySQLStatus)
		wait   time.Duration
	}{
		{"ready replicas", func(s *databasev1.MySQLStatus) { s.ReadyReplicas = 2 }, dataInterval - 25*time.Second},
		{"pods created", func(s *databasev1.MySQLStatus) { s.Replicas = 2 }, staleInterval - 25*time.Second},
		{"condition message", func(s *databasev1.MySQLStatus) {
			s.Conditions[0].Message += "; pod db-1 waits for its claim data-db-1 to be bound"
		}, dataInterval - 25*time.Second},
		{"instance message", func(s *databasev1.MySQLStatus) { s.Instances[0].Message = "server not started" }, staleInterval - 25*time.Second},
		{"instance role", func(s *databasev1.MySQLStatus) { s.Instances[0].Role = databasev1.RoleReplica }, staleInterval - 25*time.Second},
	} {
		want := *rolling.Status.DeepCopy()
		tt.change(&want)
		if wait, wrote, err := w.write(context.Background(), rolling, want); err != nil || wrote || wait != tt.wait {
			t.Errorf("in progress, %s alone: wait %s, wrote %t, %v; want %s, not written", tt.name, wait, wrote, err, tt.wait)
		}
	}
}

// statusPatches lists the status writes of one MySQL among requests.
func statusPatches(requests []string, ns, name string) []string {
	var out []string
	for _, r := range requests {
		if strings.HasSuffix(r, "/namespaces/"+ns+"/mysqls/"+name+"/status") {
			out = append(out, r)
		}
	}
	return out
}

// TestRollOutWritesStatusOnce scales a Current MySQL and moves its
// StatefulSet through the replica counts of a roll-out: the MySQL reads
// InProgress throughout, and the whole change costs one status write.
func TestRollOutWritesStatusOnce(t *testing.T) {
	writes, _ := startManager(t, func(r *Reconciler) { r.ProgressInterval = time.Hour })
	ctx := context.Background()
	ns := env.NewNamespace(t)
	m := ctrltest.NewMySQL(ns, "db", 1)
	key := env.Create(t, m)
	env.WaitKstatus(t, key, status.InProgressStatus)
	env.MarkStatefulSetReady(t, key)
	env.ServePods(t, m, 0, 1)
	env.WaitKstatus(t, key, status.CurrentStatus)

	before := len(writes.Snapshot())
	if err := env.Client.Patch(ctx, m, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"replicas":3}}`))); err != nil {
		t.Fatal(err)
	}
	sts := &appsv1.StatefulSet{}
	ctrltest.Eventually(t, "the StatefulSet to be scaled", func(ctx context.Context) (bool, error) {
		err := env.Client.Get(ctx, key, sts)
		return err == nil && *sts.Spec.Replicas == 3, err
	})
	env.ServePods(t, m, 1, 3)
	// What the StatefulSet controller reports as pods start, one step at a time.
	for _, step := range []struct{ replicas, ready int32 }{{1, 1}, {2, 1}, {3, 1}, {3, 2}} {
		count := reconcileCount(t)
		ctrltest.Eventually(t, "StatefulSet status to move", func(ctx context.Context) (bool, error) {
			if err := env.Client.Get(ctx, key, sts); err != nil {
				return false, err
			}
			sts.Status = appsv1.StatefulSetStatus{ObservedGeneration: sts.Generation, Replicas: step.replicas, ReadyReplicas: step.ready,
				AvailableReplicas: step.ready, CurrentReplicas: step.replicas, UpdatedReplicas: step.replicas, CurrentRevision: "r1", UpdateRevision: "r1"}
			return env.Client.Status().Update(ctx, sts) == nil, nil
		})
		ctrltest.Eventually(t, "a reconcile of the step", func(context.Context) (bool, error) { return reconcileCount(t) > count, nil })
		env.WaitKstatus(t, key, status.InProgressStatus)
	}
	if got := statusPatches(writes.Snapshot()[before:], ns, "db"); len(got) != 0 {
		t.Fatalf("status written %d times while the MySQL stayed InProgress: %v", len(got), got)
	}
	env.MarkStatefulSetReady(t, key)
	env.MarkPDBReady(t, client.ObjectKey{Namespace: ns, Name: children.PodDisruptionBudgetName(m)})
	env.WaitKstatus(t, key, status.CurrentStatus)
	if got := statusPatches(writes.Snapshot()[before:], ns, "db"); len(got) != 1 {
		t.Fatalf("the change cost %d status writes, want 1: %v", len(got), got)
	}
	if err := env.Client.Get(ctx, key, m); err != nil {
		t.Fatal(err)
	}
	if m.Status.Replicas != 3 || m.Status.ReadyReplicas != 3 || m.Status.Phase != databasev1.PhaseRunning {
		t.Errorf("status = %+v, want 3/3 Running", m.Status)
	}
}

// TestHeldStatusLands leaves a MySQL rolling out with nothing else
// happening: the held status write still lands after the interval.
func TestHeldStatusLands(t *testing.T) {
	startManager(t, func(r *Reconciler) { r.ProgressInterval = time.Second })
	ns := env.NewNamespace(t)
	m := ctrltest.NewMySQL(ns, "db", 1)
	key := env.Create(t, m)
	ctrltest.Eventually(t, "the Reconciling status to be written", func(ctx context.Context) (bool, error) {
		if err := env.Client.Get(ctx, key, m); err != nil {
			return false, err
		}
		c := ctrltest.Condition(m.Status.Conditions, databasev1.ConditionReconciling)
		return m.Status.ObservedGeneration == m.Generation && c != nil && c.Status == metav1.ConditionTrue, nil
	})
	if m.Status.Phase != databasev1.PhasePending {
		t.Errorf("phase = %q, want Pending", m.Status.Phase)
	}
}
