package mysql

import (
	"testing"

	"github.com/example/mysql-operator/internal/ctrltest"
	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
)

// TestSettledChildrenStatus changes a StatefulSet's status while its
// MySQL's children are settled and the view of them is remembered: the
// MySQL's status follows each change, so the remembered view is never
// reused past the fingerprint it was read at.
func TestSettledChildrenStatus(t *testing.T) {
	var rec *Reconciler
	startManager(t, func(r *Reconciler) { rec = r })
	ns := env.NewNamespace(t)
	m := ctrltest.NewMySQL(ns, "db", 1)
	key := env.Create(t, m)
	env.MarkStatefulSetReady(t, key)
	env.ServePods(t, m, 0, 1)
	env.WaitKstatus(t, key, status.CurrentStatus)
	for _, ready := range []int32{0, 1, 0} {
		waitSettled(t, rec, key)
		sts := &appsv1.StatefulSet{}
		env.SetStatus(t, key, sts, func() {
			sts.Status = appsv1.StatefulSetStatus{ObservedGeneration: sts.Generation, Replicas: 1, ReadyReplicas: ready,
				AvailableReplicas: ready, CurrentReplicas: 1, UpdatedReplicas: 1, CurrentRevision: "r1", UpdateRevision: "r1"}
		})
		want := status.CurrentStatus
		if ready == 0 {
			want = status.InProgressStatus
		}
		env.WaitKstatus(t, key, want)
	}
}
