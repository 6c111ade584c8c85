package dataplane

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// TestUnreachableFor: the failover grace counts from the earliest evidence
// after the primary last answered, the kubelet's not-ready included, and
// starts again once it answers.
func TestUnreachableFor(t *testing.T) {
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	w := newPrimaryWatch()
	w.now = func() time.Time { return now }
	key := types.NamespacedName{Namespace: "ns", Name: "db"}
	if d := w.unreachableFor(key, false, time.Time{}); d != 0 {
		t.Fatalf("reachable: %v", d)
	}
	seen := now
	now = now.Add(10 * time.Second)
	// Not ready 2 s before the first failed check: it counts from then.
	if d := w.unreachableFor(key, true, now.Add(-2*time.Second)); d != 2*time.Second {
		t.Errorf("first failed check, not ready 2 s before: %v, want 2s", d)
	}
	now = now.Add(3 * time.Second)
	if d := w.unreachableFor(key, true, now.Add(-5*time.Second)); d != 5*time.Second {
		t.Errorf("3 s later: %v, want 5s", d)
	}
	// Not ready since before it last answered: that is not evidence.
	now = now.Add(time.Second)
	w.unreachableFor(key, false, time.Time{})
	now = now.Add(time.Second)
	if d := w.unreachableFor(key, true, seen); d != 0 {
		t.Errorf("not ready since before it last answered: %v, want 0", d)
	}
	now = now.Add(4 * time.Second)
	if d := w.unreachableFor(key, true, time.Time{}); d != 4*time.Second {
		t.Errorf("4 s after the first failed check: %v", d)
	}
}

// TestStuckFor: commits count as stuck while they wait and the primary's
// GTIDs do not move; a move, another primary or no waiting starts again.
func TestStuckFor(t *testing.T) {
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	w := newPrimaryWatch()
	w.now = func() time.Time { return now }
	key := types.NamespacedName{Namespace: "ns", Name: "db"}
	steps := []struct {
		after          time.Duration
		index, waiting int
		executed       string
		want           time.Duration
	}{
		{0, 0, 1, "0-1-10", 0},
		{time.Second, 0, 1, "0-1-10", time.Second},
		{time.Second, 0, 2, "0-1-10", 2 * time.Second},
		{time.Second, 0, 1, "0-1-11", 0}, // moved: a busy primary
		{3 * time.Second, 0, 1, "0-1-11", 3 * time.Second},
		{time.Second, 1, 1, "0-1-11", 0}, // another primary
		{time.Second, 1, 0, "0-1-11", 0},
		{time.Second, 1, 1, "0-1-11", 0},
	}
	for i, s := range steps {
		now = now.Add(s.after)
		if got := w.stuckFor(key, s.index, s.waiting, s.executed); got != s.want {
			t.Errorf("step %d: %v, want %v", i, got, s.want)
		}
	}
}
