package mysql

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/controller/vocabulary"
)

// DefaultProgressInterval is the least time between two status writes of a
// MySQL that stays in progress.
const DefaultProgressInterval = 5 * time.Second

// dataInterval is the least time between two status writes of a MySQL
// whose only change is in its details (see sameShape); in progress, in
// its ready count or its messages (see detailInterval).
const dataInterval = time.Minute

// staleInterval is the least time between two status writes of a MySQL in
// progress whose only change is in its count of pods or its instances. It
// bounds how old they grow while a long roll-out waits.
const staleInterval = 10 * time.Minute

// statusWriter is the one place MySQL statuses are written. It patches a
// status only when it changed, in one merge patch: fluxcd/pkg/runtime's
// patch helper would send the conditions and the rest of the status as two
// writes, and readers could see the first without the second.
//
// It remembers two things per MySQL, in one map:
//   - since when a MySQL has been in progress without a write. A roll-out
//     moves the StatefulSet's replica counts several times; each move would
//     be a status write that tells a kstatus reader nothing new, since the
//     MySQL was InProgress before it and is after it. Such writes are held
//     back until interval has passed since the MySQL was first seen in
//     progress or last written, so that a quick roll-out costs one status
//     write, its end, and a slow one a write per interval in which its
//     shape changed (see sameShape); a change of details alone waits for
//     dataInterval after the last write when it moves what a reader of a
//     roll-out follows (the ready count, the messages) or the MySQL is not
//     in progress, else staleInterval (see detailInterval). Writes that
//     change what kstatus reads (to Current, to Failed, or out of either)
//     are never held.
//   - the status last patched and the resourceVersion the patch returned,
//     until the cache shows that version. A reconcile that runs on a cache
//     older than the manager's own last write (a child's event can come
//     first) computes the same status from the stale copy and would send it
//     again.
type statusWriter struct {
	client   client.Client
	interval time.Duration
	now      func() time.Time

	mu    sync.Mutex
	byKey map[types.NamespacedName]*statusMemo
}

// statusMemo is what the statusWriter remembers of one MySQL.
type statusMemo struct {
	// since is when the MySQL was first seen in progress, or last written
	// in progress; zero when it is not tracked.
	since time.Time
	// written is the status last patched, and the resourceVersion the
	// patch returned; empty when the cache has shown it.
	resourceVersion string
	sum             [sha256.Size]byte
	// lastWrite is when the status was last written.
	lastWrite time.Time
	// primary is status.currentPrimary as last written.
	primary string
}

func newStatusWriter(c client.Client, interval time.Duration) *statusWriter {
	return &statusWriter{client: c, interval: interval, now: time.Now, byKey: map[types.NamespacedName]*statusMemo{}}
}

// write patches obj's status to want unless it holds already, the cache has
// not shown the same status written a moment ago, or the write would leave
// the MySQL in progress as it was and the interval has not passed. It
// returns how soon to reconcile again so that a held write lands even if
// nothing else happens (zero when nothing is held), and whether it wrote.
func (w *statusWriter) write(ctx context.Context, obj *databasev1.MySQL, want databasev1.MySQLStatus) (time.Duration, bool, error) {
	key := client.ObjectKeyFromObject(obj)
	after := &databasev1.MySQL{ObjectMeta: obj.ObjectMeta, Status: want}
	if equality.Semantic.DeepEqual(obj.Status, want) {
		if !inProgress(obj) {
			w.stopTracking(key)
		}
		return 0, false, nil
	}
	if w.unseen(obj, &want) {
		return 0, false, nil
	}
	// A new primary is written at once: the next reconcile must act on it.
	progressing := inProgress(obj) && inProgress(after) && obj.Status.CurrentPrimary == want.CurrentPrimary
	var wait time.Duration
	if progressing {
		wait = w.hold(key)
	}
	if sameShape(&obj.Status, &want, progressing) {
		wait = max(wait, w.detailWait(key, detailInterval(&obj.Status, &want, progressing)))
	}
	if wait > 0 {
		ctrl.LoggerFrom(ctx).V(1).Info("status write held back", "after", wait)
		return wait, false, nil
	}
	patched := obj.DeepCopy()
	patched.Status = want
	if err := w.client.Status().Patch(ctx, patched, client.MergeFrom(obj), client.FieldOwner(vocabulary.FieldManager)); err != nil {
		if apierrors.IsNotFound(err) {
			return 0, false, nil
		}
		return 0, false, fmt.Errorf("patch MySQL status %s: %w", obj.Name, err)
	}
	w.wrote(patched, inProgress(patched))
	return 0, true, nil
}

// memo returns the memo of key, made when absent. w.mu is held.
func (w *statusWriter) memo(key types.NamespacedName) *statusMemo {
	m := w.byKey[key]
	if m == nil {
		m = &statusMemo{}
		w.byKey[key] = m
	}
	return m
}

// hold returns how long an in-progress status write of key must wait; zero
// means write it now.
func (w *statusWriter) hold(key types.NamespacedName) time.Duration {
	if w.interval <= 0 {
		return 0
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	now := w.now()
	m := w.memo(key)
	if m.since.IsZero() {
		m.since = now
		return w.interval
	}
	if wait := w.interval - now.Sub(m.since); wait > 0 {
		return wait
	}
	return 0
}

// detailInterval returns how long after the last write a change of the
// details alone from a to b is held. In progress, what a reader follows
// (the ready count, how a roll-out advances, and the conditions' messages,
// which say what it waits for, such as a claim being bound) is written
// within dataInterval. The rest (the count of pods, the instances) goes
// with the next write that is due, or staleInterval after the last one: a
// roll-out that waits minutes for its pods (a busy control plane) then
// costs two status writes, its acknowledgement and its end, and its
// instances are never older than staleInterval. Out of progress every
// detail waits dataInterval.
func detailInterval(a, b *databasev1.MySQLStatus, progressing bool) time.Duration {
	if !progressing || a.ReadyReplicas != b.ReadyReplicas || a.Message != b.Message || len(a.Conditions) != len(b.Conditions) {
		return dataInterval
	}
	for i := range a.Conditions {
		if a.Conditions[i].Message != b.Conditions[i].Message {
			return dataInterval
		}
	}
	return staleInterval
}

// detailWait returns how long a write that changes only the details of a
// status must wait: until interval has passed since the last write of key.
func (w *statusWriter) detailWait(key types.NamespacedName, interval time.Duration) time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	m := w.byKey[key]
	if m == nil || m.lastWrite.IsZero() {
		return 0
	}
	return max(0, interval-w.now().Sub(m.lastWrite))
}

// sameShape says whether two statuses differ only in details. Out of
// progress, the details are the instances' messages, GTIDs and lag, which
// move all the time (with every write, and through "pod does not exist",
// "server not started" and a refused connection in the seconds an
// instance takes to come up). In progress, they are all but what a kstatus
// reader or a GitOps tool acts on: the counts, the instances and every
// message and transition time. The shape is then observedGeneration,
// phase, primary, selector and each condition's status and reason, so that
// a roll-out is written when acknowledged, when its reason changes and at
// its end, and its details in between as detailInterval says.
func sameShape(a, b *databasev1.MySQLStatus, progressing bool) bool {
	return equality.Semantic.DeepEqual(shapeOf(a, progressing), shapeOf(b, progressing))
}

func shapeOf(s *databasev1.MySQLStatus, progressing bool) *databasev1.MySQLStatus {
	c := s.DeepCopy()
	if progressing {
		c.Message, c.Replicas, c.ReadyReplicas, c.Instances = "", 0, 0, nil
		for i := range c.Conditions {
			c.Conditions[i].Message, c.Conditions[i].LastTransitionTime = "", metav1.Time{}
		}
		return c
	}
	for i := range c.Instances {
		c.Instances[i].Message, c.Instances[i].GTIDExecuted, c.Instances[i].LagSeconds = "", "", nil
	}
	return c
}

// wrote records obj's status as written at obj's resourceVersion: the
// interval of a MySQL still in progress starts again; one that is not is no
// longer tracked.
func (w *statusWriter) wrote(obj *databasev1.MySQL, stillInProgress bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	m := w.memo(client.ObjectKeyFromObject(obj))
	m.resourceVersion, m.sum, m.lastWrite, m.primary = obj.ResourceVersion, statusSum(&obj.Status), w.now(), obj.Status.CurrentPrimary
	m.since = time.Time{}
	if stillInProgress {
		m.since = w.now()
	}
}

// unseen says whether want is the status last written for cached, and the
// cache has not shown that write yet: then writing want again is a no-op.
func (w *statusWriter) unseen(cached *databasev1.MySQL, want *databasev1.MySQLStatus) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	m := w.byKey[client.ObjectKeyFromObject(cached)]
	if m == nil || m.resourceVersion == "" {
		return false
	}
	if cached.ResourceVersion == m.resourceVersion {
		m.resourceVersion = ""
		w.dropIdle(client.ObjectKeyFromObject(cached), m)
		return false
	}
	return m.sum == statusSum(want)
}

// tracking says whether key's progress interval is running.
func (w *statusWriter) tracking(key types.NamespacedName) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	m := w.byKey[key]
	return m != nil && !m.since.IsZero()
}

// stopTracking ends key's progress interval, for a MySQL no longer in progress.
func (w *statusWriter) stopTracking(key types.NamespacedName) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if m := w.byKey[key]; m != nil {
		m.since = time.Time{}
		w.dropIdle(key, m)
	}
}

// dropIdle deletes the memo m of key when it holds nothing. w.mu is held.
func (w *statusWriter) dropIdle(key types.NamespacedName, m *statusMemo) {
	if m.since.IsZero() && m.resourceVersion == "" && w.now().Sub(m.lastWrite) >= dataInterval {
		delete(w.byKey, key)
	}
}

// lastPrimary returns status.currentPrimary as this writer last wrote it,
// while it remembers a write of key: the cache may not show it yet, and
// acting on an older primary would undo a failover. Nothing but the
// operator writes status.
func (w *statusWriter) lastPrimary(key types.NamespacedName) (string, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	m := w.byKey[key]
	if m == nil || m.lastWrite.IsZero() {
		return "", false
	}
	return m.primary, true
}

// forget drops all that is remembered of key, for a MySQL that is gone.
func (w *statusWriter) forget(key types.NamespacedName) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.byKey, key)
}

// statusSum hashes a status, condition transition times left out: two
// reconciles that compute the same transition a moment apart agree on
// everything else.
func statusSum(s *databasev1.MySQLStatus) [sha256.Size]byte {
	c := s.DeepCopy()
	for i := range c.Conditions {
		c.Conditions[i].LastTransitionTime = metav1.Time{}
	}
	data, _ := json.Marshal(c) // a status always marshals
	return sha256.Sum256(data)
}
