package mysql

import (
	"context"
	"time"

	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	databasev1 "github.com/example/mysql-operator/api/v1"
)

// PriorityOutcome is the work queue priority of a MySQL whose children or
// pods moved: the outcome of what the operator did comes in, and the
// reconcile that reads it is cheap (the children are applied already; it
// observes, and may write the status). It goes ahead of a spec change
// (priority 0), so that with many MySQLs changed at once each finishes as
// its pods get ready, rather than waiting behind the first passes of all
// the others; it does not starve them, since each such event follows a
// change of a child. Events of the cache's initial list and resyncs stay
// at handler.LowPriority, with the periodic checks.
const PriorityOutcome = 10

// withPriority wraps an event handler so that what it enqueues without a
// priority of its own is enqueued at priority.
type withPriority struct {
	handler.EventHandler
	priority int
}

// Create implements handler.EventHandler.
func (h withPriority) Create(ctx context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	h.EventHandler.Create(ctx, e, h.queue(q))
}

// Update implements handler.EventHandler.
func (h withPriority) Update(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	h.EventHandler.Update(ctx, e, h.queue(q))
}

// Delete implements handler.EventHandler.
func (h withPriority) Delete(ctx context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	h.EventHandler.Delete(ctx, e, h.queue(q))
}

// Generic implements handler.EventHandler.
func (h withPriority) Generic(ctx context.Context, e event.GenericEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	h.EventHandler.Generic(ctx, e, h.queue(q))
}

// queue returns q, when it is a priority queue wrapped to default to the
// handler's priority.
func (h withPriority) queue(q workqueue.TypedRateLimitingInterface[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request] {
	pq, ok := q.(priorityqueue.PriorityQueue[reconcile.Request])
	if !ok {
		return q
	}
	return defaultPriority{PriorityQueue: pq, priority: h.priority}
}

// defaultPriority is a priority queue whose adds without a priority get
// priority.
type defaultPriority struct {
	priorityqueue.PriorityQueue[reconcile.Request]
	priority int
}

// Add implements workqueue.TypedInterface.
func (q defaultPriority) Add(item reconcile.Request) {
	q.AddWithOpts(priorityqueue.AddOpts{}, item)
}

// AddAfter implements workqueue.TypedDelayingInterface.
func (q defaultPriority) AddAfter(item reconcile.Request, after time.Duration) {
	q.AddWithOpts(priorityqueue.AddOpts{After: after}, item)
}

// AddRateLimited implements workqueue.TypedRateLimitingInterface.
func (q defaultPriority) AddRateLimited(item reconcile.Request) {
	q.AddWithOpts(priorityqueue.AddOpts{RateLimited: true}, item)
}

// AddWithOpts implements priorityqueue.PriorityQueue.
func (q defaultPriority) AddWithOpts(o priorityqueue.AddOpts, items ...reconcile.Request) {
	if o.Priority == nil {
		o.Priority = &q.priority
	}
	q.PriorityQueue.AddWithOpts(o, items...)
}

// ownedBy is the handler of a child kind: it enqueues the MySQL that
// controls the child, at PriorityOutcome.
func ownedBy(c client.Client) handler.EventHandler {
	return withPriority{EventHandler: handler.EnqueueRequestForOwner(c.Scheme(), c.RESTMapper(), &databasev1.MySQL{}, handler.OnlyControllerOwner()), priority: PriorityOutcome}
}
