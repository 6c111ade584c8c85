package dataplane

import (
	"context"
	"sync"
	"time"

	"github.com/example/mysql-operator/controller/outcome"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
)

// demotedWindow is how long after a switchover the operator keeps ending
// client connections on the old primary. A client cut off by the
// switchover reconnects through the primary's Service at once, and until
// kube-proxy has moved the Service (about a second) reaches the old, now
// read-only, primary, where its writes fail for as long as it keeps that
// connection. Ending those connections makes it reconnect to the new one.
// Connections to that instance through the replicas' Service are ended
// too, in that window only.
const demotedWindow = 5 * time.Second

// demotions remembers, per MySQL, the old primary of its last switchover
// and until when its clients are cut off. It is in memory: a restarted
// operator forgets it, and clients then wait for their own reconnect.
type demotions struct {
	mu    sync.Mutex
	now   func() time.Time
	until map[types.NamespacedName]demotion
}

// demotion is one old primary and the end of its window.
type demotion struct {
	index int
	until time.Time
}

func newDemotions() *demotions {
	return &demotions{now: time.Now, until: map[types.NamespacedName]demotion{}}
}

// mark starts the window of key's old primary index.
func (d *demotions) mark(key types.NamespacedName, index int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.until[key] = demotion{index: index, until: d.now().Add(demotedWindow)}
}

// pending returns key's old primary and the time its window has left; ok
// is false once the window has ended.
func (d *demotions) pending(key types.NamespacedName) (index int, left time.Duration, ok bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	dm, found := d.until[key]
	if !found {
		return -1, 0, false
	}
	if left = dm.until.Sub(d.now()); left <= 0 {
		delete(d.until, key)
		return -1, 0, false
	}
	return dm.index, left, true
}

// forget drops key, for a MySQL that is gone.
func (d *demotions) forget(key types.NamespacedName) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.until, key)
}

// cutOffDemoted ends the client connections of a switchover's old primary
// while its window lasts, once it is no longer the primary, and asks to
// look again within a second until the window ends.
func (d *DataPlane) cutOffDemoted(ctx context.Context, key types.NamespacedName, in *instances, primary int, rep *Report) {
	i, left, ok := d.demoted.pending(key)
	if !ok || i == primary || i >= len(in.db) || in.db[i] == nil || !in.observed[i].Reachable {
		return
	}
	n, err := in.db[i].KillConnections(ctx)
	if err != nil {
		ctrl.LoggerFrom(ctx).Info("end client connections on the old primary", "pod", in.pods[i].Name, "error", err.Error())
	} else if n > 0 {
		ctrl.LoggerFrom(ctx).Info("ended client connections on the old primary", "pod", in.pods[i].Name, "connections", n)
	}
	rep.Recheck = outcome.Soonest(rep.Recheck, min(time.Second, left))
}
