package outcome

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// TestUntilCheck: an object is checked every interval exactly, at a phase
// of its own, and the checks of 1000 objects due at once after a restart
// spread over the interval: each tenth of it holds about a tenth of them.
func TestUntilCheck(t *testing.T) {
	const interval = 10 * time.Second
	now := time.Date(2026, 12, 5, 20, 0, 0, 123456789, time.UTC)
	tenths := make([]int, 10)
	for i := range 1000 {
		uid := types.UID(fmt.Sprintf("6f1c2a3e-%04x-4b5c-9d0e-%012x", i, i*7919))
		d := UntilCheck(now, uid, interval)
		if d <= 0 || d > interval {
			t.Fatalf("next check of %s in %v: want (0, %v]", uid, d, interval)
		}
		if next := UntilCheck(now.Add(d), uid, interval); next != interval {
			t.Fatalf("check of %s after %v, then after %v: want every %v", uid, d, next, interval)
		}
		tenths[int(d*10/(interval+1))]++
	}
	for i, n := range tenths {
		if n < 70 || n > 130 {
			t.Errorf("%d of 1000 checks due in tenth %d of the interval, want about 100: %v", n, i, tenths)
		}
	}
	if d := UntilCheck(now, "u", 0); d != 0 {
		t.Errorf("no interval, a check in %v", d)
	}
}
