package dataplane

import (
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/example/mysql-operator/controller/outcome"
	"github.com/example/mysql-operator/controller/vocabulary"
	"github.com/example/mysql-operator/topology"
)

// primaryWatch remembers, per MySQL, what the failover grace and the
// release of stuck commits count time from: when its primary was last seen
// reachable, since when it has been unreachable, and since when its
// commits have waited for acknowledgements with nothing moving. It is in
// memory: a restarted operator starts counting again, the safe direction,
// but for what the kubelet says of the primary's pod.
type primaryWatch struct {
	mu    sync.Mutex
	now   func() time.Time
	byKey map[types.NamespacedName]*watched
}

// watched is what primaryWatch remembers of one MySQL's primary.
type watched struct {
	// lastSeen is when it last answered; lost when it first did not
	// since, zero while it answers.
	lastSeen, lost time.Time
	// stuckIndex and stuckAt are the primary and its executed GTIDs when
	// its commits were first seen waiting, at stuckSince; stuckSince is
	// zero while none wait.
	stuckIndex int
	stuckAt    string
	stuckSince time.Time
}

func newPrimaryWatch() *primaryWatch {
	return &primaryWatch{now: time.Now, byKey: map[types.NamespacedName]*watched{}}
}

// memo returns the memo of key, made when absent. w.mu is held.
func (w *primaryWatch) memo(key types.NamespacedName) *watched {
	m := w.byKey[key]
	if m == nil {
		m = &watched{}
		w.byKey[key] = m
	}
	return m
}

// unreachableFor records whether key's primary is unreachable and returns
// for how long it has been: since the earliest evidence after it last
// answered, the operator's first failed check or the kubelet marking its
// pod not ready (notReady, zero when the pod is ready), whichever came
// first. The kubelet probes every second: a lost node or partition is seen
// there before the operator's next periodic check looks.
func (w *primaryWatch) unreachableFor(key types.NamespacedName, unreachable bool, notReady time.Time) time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	now, m := w.now(), w.memo(key)
	if !unreachable {
		m.lastSeen, m.lost = now, time.Time{}
		return 0
	}
	if m.lost.IsZero() {
		m.lost = now
	}
	first := m.lost
	if !notReady.IsZero() && notReady.Before(first) && notReady.After(m.lastSeen) {
		first = notReady
	}
	return now.Sub(first)
}

// stuckFor records how many commits wait for acknowledgements on key's
// primary, instance index with executed GTIDs executed, and returns how
// long some have waited while the primary and its GTIDs stayed the same;
// zero when none wait.
func (w *primaryWatch) stuckFor(key types.NamespacedName, index, waiting int, executed string) time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	now, m := w.now(), w.memo(key)
	if waiting == 0 {
		m.stuckSince = time.Time{}
		return 0
	}
	if m.stuckSince.IsZero() || m.stuckIndex != index || m.stuckAt != executed {
		m.stuckIndex, m.stuckAt, m.stuckSince = index, executed, now
		return 0
	}
	return now.Sub(m.stuckSince)
}

// forget drops key, for a MySQL that is gone.
func (w *primaryWatch) forget(key types.NamespacedName) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.byKey, key)
}

// notReadySince returns when the kubelet marked pod not ready, zero when
// it is ready or there is no pod.
func notReadySince(pod *corev1.Pod) time.Time {
	if pod == nil {
		return time.Time{}
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status != corev1.ConditionTrue {
			return c.LastTransitionTime.Time
		}
	}
	return time.Time{}
}

// recheck is how soon to look again at c for what the primary's watch
// counts: when the failover grace of an unreachable primary ends, or
// when waiting commits would count as stuck; zero for no sooner than the
// periodic check.
func recheck(c topology.Cluster) time.Duration {
	if c.CurrentPrimary < 0 {
		return 0
	}
	const margin = 100 * time.Millisecond
	if !c.Instances[c.CurrentPrimary].Reachable {
		return outcome.Soonest(c.FailoverGrace - c.PrimaryUnreachableFor + margin)
	}
	if c.Instances[c.CurrentPrimary].SemiSyncWaitSessions > 0 {
		return outcome.Soonest(topology.CommitStuckGrace - c.CommitsStuckFor + margin)
	}
	return 0
}

// primaryReason is the status reason of the primary's state: unreachable,
// or lost past its grace with no safe failover; "" when it answers.
func primaryReason(c topology.Cluster, plan topology.Plan) string {
	switch {
	case plan.FailoverBlocked:
		return vocabulary.ReasonFailoverBlocked
	case c.CurrentPrimary >= 0 && !c.Instances[c.CurrentPrimary].Reachable:
		return vocabulary.ReasonPrimaryUnreachable
	}
	return ""
}
