package applyset

import (
	"crypto/sha256"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Seen remembers the members the manager applied and the cache has not
// shown yet, so that a lagging cache is awaited rather than applied again,
// and, the way Cluster API's server-side apply cache does, each member
// whose summary does not show its desired state although it was just
// applied (its field set recorded otherwise than Apply computes it): the
// summary it had then, so that such a member is not applied again at every
// reconcile.
//
// A member is seen unchanged while its desired hash and UID are the same and
// either its resourceVersion is the one remembered or its summary is the
// one remembered: server-side apply takes a field from a manager as soon as
// anyone else changes its value (a forced apply, an update, a patch through
// any subresource) or removes it, so while the summary is unchanged every
// owned field keeps the value the manager applied. A nil *Seen remembers
// nothing.
type Seen struct {
	mu  sync.Mutex
	m   map[string]seenEntry
	now func() time.Time
}

type seenEntry struct {
	uid             types.UID
	resourceVersion string
	// fields is the member's summary (see ownedHash) at resourceVersion;
	// zero until an object at that version is read.
	fields [sha256.Size]byte
	hash   [sha256.Size]byte
	// applied is when the manager applied the member, if it did, and the
	// generation the apply gave it.
	applied    time.Time
	generation int64
}

// NewSeen returns an empty Seen.
func NewSeen() *Seen { return &Seen{m: map[string]seenEntry{}, now: time.Now} }

// awaiting says whether the member was applied, as hash, less than
// AwaitCache ago and no read has shown it since.
func (s *Seen) awaiting(key string, hash [sha256.Size]byte) bool {
	if s == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.m[key]
	return ok && e.hash == hash && e.fields == [sha256.Size]byte{} && s.now().Sub(e.applied) < AwaitCache
}

// behind says whether live is the member as it was before the manager's
// last apply of it: same object, older generation. The cache shows it a
// moment later; comparing it now would apply the same change again.
// Generations, unlike resourceVersions, are ordered.
func (s *Seen) behind(key string, live client.Object) bool {
	if s == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.m[key]
	return ok && !e.applied.IsZero() && e.uid == live.GetUID() && live.GetGeneration() < e.generation
}

// unchanged says whether live, whose desired state is hash, needs no
// apply: its summary (see ownedHash) is that of the desired state, and the
// member is forgotten, since its summary is all Apply needs; or it is the
// summary remembered at the member's last apply or since, for a member
// whose field set the server records otherwise than Apply computes it. So
// Seen holds only members applied and not yet read back, and those that
// differ in form, rather than every member at rest.
func (s *Seen) unchanged(key string, live client.Object, fieldManager string, hash [sha256.Size]byte) bool {
	fields, found := ownedHash(live, fieldManager)
	switch {
	case !found:
		return false
	case fields == hash:
		s.forget(key)
		return true
	case s == nil:
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.m[key]
	if !ok || e.hash != hash || e.uid != live.GetUID() {
		return false
	}
	if live.GetResourceVersion() == e.resourceVersion && e.fields == ([sha256.Size]byte{}) {
		// The first read at the applied version learns its summary.
		e.fields = fields
		s.m[key] = e
	}
	return e.fields != ([sha256.Size]byte{}) && e.fields == fields
}

// applied remembers a member just applied: the server's answer carries its
// UID and resourceVersion but not its managedFields, which unchanged reads
// later.
func (s *Seen) applied(key string, uid types.UID, resourceVersion string, generation int64, hash [sha256.Size]byte) {
	if s == nil || uid == "" || resourceVersion == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[key] = seenEntry{uid: uid, resourceVersion: resourceVersion, hash: hash, applied: s.now(), generation: generation}
}

func (s *Seen) forget(key string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, key)
}
