// Package outcome is how a reconcile of any of the operator's kinds ends
// and when it runs again: a stall (an error retrying cannot fix), the
// soonest of the times it waits for, and the phase of its periodic check.
// The MySQL and SQL-object reconcilers share it; it imports none of them.
package outcome

import (
	"errors"
	"fmt"
	"hash/fnv"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// Stall is an error that retrying cannot fix: the spec, or something it
// names, has to change. The object is marked Stalled with Reason and
// Message, and its children stay as they were.
type Stall struct {
	// Reason is the Stalled condition's reason (package vocabulary).
	Reason string
	// Message says what is wrong, naming the field or object.
	Message string
	// Retry, when set, is how soon to try again anyway: the remedy lies
	// in an object the reconciler does not watch.
	Retry time.Duration
}

func (e *Stall) Error() string { return e.Message }

// Stalled makes the Stall of a reason, its message formatted.
func Stalled(reason, format string, args ...any) *Stall {
	return &Stall{Reason: reason, Message: fmt.Sprintf(format, args...)}
}

// AsStall returns the Stall err carries, or nil.
func AsStall(err error) *Stall {
	var stall *Stall
	if errors.As(err, &stall) {
		return stall
	}
	return nil
}

// Soonest returns the smallest positive duration, zero when there is none.
func Soonest(ds ...time.Duration) time.Duration {
	var least time.Duration
	for _, d := range ds {
		if d > 0 && (least == 0 || d < least) {
			least = d
		}
	}
	return least
}

// UntilCheck returns how long until the next periodic check of the object
// whose UID is uid: at most interval, 0 when interval is (no periodic
// checks). Each object is checked once per interval at its own phase of
// it, made from its UID, so that the checks of many objects spread evenly
// over the interval. A restarted manager reconciles every MySQL at once; if
// each then came back an interval later, they would all be checked at once
// every interval: a burst of N x instances status queries, and of
// allocation, where an even load does the same work.
func UntilCheck(now time.Time, uid types.UID, interval time.Duration) time.Duration {
	if interval <= 0 {
		return 0
	}
	h := fnv.New64a()
	h.Write([]byte(uid))
	phase := int64(h.Sum64() % uint64(interval))
	return interval - time.Duration((now.UnixNano()+phase)%int64(interval))
}
