package mysql

import (
	"context"
	"testing"

	"github.com/example/mysql-operator/controller/vocabulary"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// TestWithPriority checks the priorities pod events get in the
// controller's queue: a pod that moved goes ahead of a spec change, and
// the cache's initial list and unchanged resyncs stay behind it.
func TestWithPriority(t *testing.T) {
	pod := func(mysql, rv string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: mysql + "-0", ResourceVersion: rv,
			Labels: map[string]string{vocabulary.LabelInstance: mysql}}}
	}
	req := func(name string) reconcile.Request {
		return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: name}}
	}
	h := withPriority{EventHandler: handler.EnqueueRequestsFromMapFunc(mysqlOfPod), priority: PriorityOutcome}
	q := priorityqueue.New[reconcile.Request]("test")
	defer q.ShutDown()
	ctx := context.Background()

	q.Add(req("spec-changed"))
	h.Create(ctx, event.CreateEvent{Object: pod("listed", "1"), IsInInitialList: true}, q)
	h.Update(ctx, event.UpdateEvent{ObjectOld: pod("resynced", "2"), ObjectNew: pod("resynced", "2")}, q)
	h.Update(ctx, event.UpdateEvent{ObjectOld: pod("moved", "3"), ObjectNew: pod("moved", "4")}, q)
	h.Delete(ctx, event.DeleteEvent{Object: pod("deleted", "5")}, q)

	want := []struct {
		name     string
		priority int
	}{
		{"moved", PriorityOutcome}, {"deleted", PriorityOutcome}, {"spec-changed", 0},
		{"listed", handler.LowPriority}, {"resynced", handler.LowPriority},
	}
	for _, w := range want {
		item, priority, _ := q.GetWithPriority()
		if item != req(w.name) || priority != w.priority {
			t.Errorf("got %s at priority %d, want %s at %d", item.Name, priority, w.name, w.priority)
		}
		q.Done(item)
	}
}
