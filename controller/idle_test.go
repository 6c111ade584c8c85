package controller

import (
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/types"
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

// TestUntilCheck: an object is checked every interval exactly, at a phase
// of its own, and the checks of 1000 objects due at once after a restart
// spread over the interval: each tenth of it holds about a tenth of them.
func TestUntilCheck(t *testing.T) {
	const interval = 10 * time.Second
	now := time.Date(2026, 12, 5, 20, 0, 0, 123456789, time.UTC)
	tenths := make([]int, 10)
	for i := range 1000 {
		uid := types.UID(fmt.Sprintf("6f1c2a3e-%04x-4b5c-9d0e-%012x", i, i*7919))
		d := untilCheck(now, uid, interval)
		if d <= 0 || d > interval {
			t.Fatalf("next check of %s in %v: want (0, %v]", uid, d, interval)
		}
		if next := untilCheck(now.Add(d), uid, interval); next != interval {
			t.Fatalf("check of %s after %v, then after %v: want every %v", uid, d, next, interval)
		}
		tenths[int(d*10/(interval+1))]++
	}
	for i, n := range tenths {
		if n < 70 || n > 130 {
			t.Errorf("%d of 1000 checks due in tenth %d of the interval, want about 100: %v", n, i, tenths)
		}
	}
	if d := untilCheck(now, "u", 0); d != 0 {
		t.Errorf("no interval, a check in %v", d)
	}
}
