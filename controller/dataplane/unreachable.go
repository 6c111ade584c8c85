package dataplane

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// unreachableSince remembers, per MySQL, since when its primary has been
// unreachable. It is in memory: a restarted operator starts the failover
// grace again, the safe direction.
type unreachableSince struct {
	mu    sync.Mutex
	now   func() time.Time
	first map[types.NamespacedName]time.Time
}

func newUnreachableSince() *unreachableSince {
	return &unreachableSince{now: time.Now, first: map[types.NamespacedName]time.Time{}}
}

// since records whether key's primary is unreachable now and returns for
// how long it has been; zero when it is reachable.
func (u *unreachableSince) since(key types.NamespacedName, unreachable bool) time.Duration {
	u.mu.Lock()
	defer u.mu.Unlock()
	if !unreachable {
		delete(u.first, key)
		return 0
	}
	first, ok := u.first[key]
	if !ok {
		u.first[key] = u.now()
		return 0
	}
	return u.now().Sub(first)
}

// forget drops key, for a MySQL that is gone.
func (u *unreachableSince) forget(key types.NamespacedName) { u.since(key, false) }
