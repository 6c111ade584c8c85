package controller

import (
	"testing"

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
	ns := newNamespace(t)
	m := newMySQL(ns, "db", 1)
	key := create(t, m)
	markStatefulSetReady(t, key)
	servePods(t, m, 0, 1)
	waitKstatus(t, key, status.CurrentStatus)
	for _, ready := range []int32{0, 1, 0} {
		waitSettled(t, rec, key)
		sts := &appsv1.StatefulSet{}
		setStatus(t, key, sts, func() {
			sts.Status = appsv1.StatefulSetStatus{ObservedGeneration: sts.Generation, Replicas: 1, ReadyReplicas: ready,
				AvailableReplicas: ready, CurrentReplicas: 1, UpdatedReplicas: 1, CurrentRevision: "r1", UpdateRevision: "r1"}
		})
		want := status.CurrentStatus
		if ready == 0 {
			want = status.InProgressStatus
		}
		waitKstatus(t, key, want)
	}
}
