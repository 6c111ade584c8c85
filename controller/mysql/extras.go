package mysql

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/controller/vocabulary"
)

// Extras are the objects the operator writes for a MySQL outside its
// ApplySet, of kinds another project defines (a cert-manager Certificate,
// a Prometheus operator PodMonitor), as unstructured objects: those
// projects are never dependencies, their kinds may not be installed, and
// the operator neither caches nor watches them. They are owned by the
// MySQL (the garbage collector deletes them with it) and never pruned.

// extraKey names one extra of one MySQL.
type extraKey struct {
	mysql types.NamespacedName
	kind  string
}

// appliedExtras remembers the hash of each extra this manager last applied,
// so that an unchanged one is not sent again (a new manager applies each
// once), and until when a kind is known not to be installed.
type appliedExtras struct {
	mu     sync.Mutex
	sums   map[extraKey][sha256.Size]byte
	absent map[string]time.Time
}

// newAppliedExtras returns an empty record.
func newAppliedExtras() *appliedExtras {
	return &appliedExtras{sums: map[extraKey][sha256.Size]byte{}, absent: map[string]time.Time{}}
}

// forget drops what was applied for the MySQL key.
func (a *appliedExtras) forget(key types.NamespacedName) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for k := range a.sums {
		if k.mysql == key {
			delete(a.sums, k)
		}
	}
}

// absentKind says whether kind was found not installed less than a while ago.
func (a *appliedExtras) absentKind(kind string, now time.Time) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return now.Before(a.absent[kind])
}

// markAbsent records that kind is not installed, to be looked for again
// after absentFor.
func (a *appliedExtras) markAbsent(kind string, now time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.absent[kind] = now.Add(absentFor)
}

// absentFor is how long a kind found not installed is not looked for again.
const absentFor = 5 * time.Minute

// applyExtra applies u for obj unless this manager applied the same one
// last; the API server's error is returned as it is, for the caller to
// judge (the kind not installed, the object refused).
func (r *Reconciler) applyExtra(ctx context.Context, obj *databasev1.MySQL, u *unstructured.Unstructured) error {
	raw, err := json.Marshal(u.Object)
	if err != nil {
		return fmt.Errorf("encode %s %s: %w", u.GetKind(), u.GetName(), err)
	}
	sum, key := sha256.Sum256(raw), extraKey{mysql: client.ObjectKeyFromObject(obj), kind: u.GetKind()}
	r.extras.mu.Lock()
	same := r.extras.sums[key] == sum
	r.extras.mu.Unlock()
	if same {
		return nil
	}
	if err := r.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(vocabulary.FieldManager), client.ForceOwnership); err != nil {
		return err
	}
	r.extras.mu.Lock()
	r.extras.sums[key] = sum
	r.extras.mu.Unlock()
	return nil
}
