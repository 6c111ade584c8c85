package dataplane

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// discards remembers, per MySQL, the instances whose server the data plane
// crashed to discard unacknowledged transactions
// (topology.ActionDiscardUnacknowledged), with the GTIDs each held then.
// An instance that still holds them after its restart is errant for good:
// it is reported, never crashed again. It is in memory: a restarted
// operator may crash such an instance once more, which costs nothing, as it
// serves no client.
type discards struct {
	mu   sync.Mutex
	byMy map[types.NamespacedName]map[int]string
}

func newDiscards() *discards {
	return &discards{byMy: map[types.NamespacedName]map[int]string{}}
}

// mark records that instance i of key was crashed holding executed.
func (d *discards) mark(key types.NamespacedName, i int, executed string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.byMy[key] == nil {
		d.byMy[key] = map[int]string{}
	}
	d.byMy[key][i] = executed
}

// of returns the instances of key crashed so far, with the GTIDs each held.
func (d *discards) of(key types.NamespacedName) map[int]string {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make(map[int]string, len(d.byMy[key]))
	for i, e := range d.byMy[key] {
		out[i] = e
	}
	return out
}

// forget drops key, for a MySQL that is gone.
func (d *discards) forget(key types.NamespacedName) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.byMy, key)
}
