package controller

import (
	"crypto/sha256"
	"encoding/json"
	"sync"
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1 "github.com/example/mysql-operator/api/v1"
)

// DefaultProgressInterval is the least time between two status writes of a
// MySQL that stays in progress.
const DefaultProgressInterval = 5 * time.Second

// inProgress says whether kstatus reads the MySQL's status as InProgress:
// its generation is not observed yet, or it is reconciling, and it has not
// stalled.
func inProgress(obj *databasev1.MySQL) bool {
	if conditions.IsStalled(obj) {
		return false
	}
	return obj.Status.ObservedGeneration < obj.Generation || conditions.IsReconciling(obj)
}

// progressLimiter spaces the status writes of MySQLs that stay in progress.
// A roll-out moves the StatefulSet's replica counts several times; each
// move would be a status write that tells a kstatus reader nothing new, since
// the MySQL was InProgress before it and is after it. The limiter holds such
// writes back until interval has passed since the MySQL was first seen in
// progress or last written, so that a quick roll-out costs one status write,
// its end, and a slow one a write per interval. Writes that change what
// kstatus reads (to Current, to Failed, or out of either) are never held.
type progressLimiter struct {
	interval time.Duration
	now      func() time.Time

	mu    sync.Mutex
	since map[types.NamespacedName]time.Time
}

func newProgressLimiter(interval time.Duration) *progressLimiter {
	return &progressLimiter{interval: interval, now: time.Now, since: map[types.NamespacedName]time.Time{}}
}

// hold returns how long an in-progress status write of key must wait; zero
// means write it now.
func (l *progressLimiter) hold(key types.NamespacedName) time.Duration {
	if l.interval <= 0 {
		return 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	since, ok := l.since[key]
	if !ok {
		l.since[key] = now
		return l.interval
	}
	if wait := l.interval - now.Sub(since); wait > 0 {
		return wait
	}
	return 0
}

// wrote records the status of key as written: the interval of a MySQL still
// in progress starts again; one that is not is forgotten.
func (l *progressLimiter) wrote(key types.NamespacedName, stillInProgress bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if stillInProgress {
		l.since[key] = l.now()
		return
	}
	delete(l.since, key)
}

// forget drops what the limiter knows of key, for a MySQL that is gone or
// no longer in progress.
func (l *progressLimiter) forget(key types.NamespacedName) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.since, key)
}

// writtenStatus remembers, per MySQL, the status the manager last patched
// and the resourceVersion the patch returned, until the cache shows that
// version. A reconcile that runs on a cache older than the manager's own
// last write (a child's event can come first) computes the same status from
// the stale copy and would send it again.
type writtenStatus struct {
	mu    sync.Mutex
	byKey map[types.NamespacedName]statusWrite
}

type statusWrite struct {
	resourceVersion string
	sum             [sha256.Size]byte
}

func newWrittenStatus() *writtenStatus {
	return &writtenStatus{byKey: map[types.NamespacedName]statusWrite{}}
}

// unseen says whether want is the status last written for cached, and the
// cache has not shown that write yet: then writing want again is a no-op.
func (w *writtenStatus) unseen(cached *databasev1.MySQL, want *databasev1.MySQLStatus) bool {
	key := client.ObjectKeyFromObject(cached)
	w.mu.Lock()
	defer w.mu.Unlock()
	last, ok := w.byKey[key]
	if !ok {
		return false
	}
	if cached.ResourceVersion == last.resourceVersion {
		delete(w.byKey, key)
		return false
	}
	return last.sum == statusSum(want)
}

// record notes the status of obj as written at obj's resourceVersion.
func (w *writtenStatus) record(obj *databasev1.MySQL) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.byKey[client.ObjectKeyFromObject(obj)] = statusWrite{resourceVersion: obj.ResourceVersion, sum: statusSum(&obj.Status)}
}

// forget drops what is remembered of key.
func (w *writtenStatus) forget(key types.NamespacedName) {
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
