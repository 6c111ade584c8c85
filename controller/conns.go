package controller

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"

	"github.com/example/mysql-operator/dbop"
)

// connections remembers which server addresses each MySQL uses, so that
// the connections of an address no longer used (a pod that got another
// address, a MySQL deleted or scaled in) are closed. The connections
// themselves are the dbop.Pool's, reused from check to check.
type connections struct {
	pool *dbop.Pool

	mu    sync.Mutex
	byKey map[types.NamespacedName][]string
}

func newConnections(pool *dbop.Pool) *connections {
	return &connections{pool: pool, byKey: map[types.NamespacedName][]string{}}
}

// keep records addrs as the addresses of key and closes the ones it had before.
func (c *connections) keep(key types.NamespacedName, addrs []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := map[string]bool{}
	for _, a := range addrs {
		now[a] = true
	}
	for _, a := range c.byKey[key] {
		if !now[a] {
			_ = c.pool.Forget(a)
		}
	}
	if len(addrs) == 0 {
		delete(c.byKey, key)
		return
	}
	c.byKey[key] = addrs
}

// forget closes every connection of key, for a MySQL that is gone.
func (c *connections) forget(key types.NamespacedName) { c.keep(key, nil) }
