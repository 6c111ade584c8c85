package applyset

import (
	"crypto/sha256"
	"encoding/json"
	"sync"
)

// Seen remembers, for each member, the resourceVersion at which its owned
// fields were last found or made equal to a desired state, and that desired
// state's hash, the way Cluster API's server-side apply cache does. While the
// object keeps that resourceVersion and the desired state that hash, nothing
// can have changed, and Apply skips the extraction and comparison of managed
// fields, which is most of a no-op reconcile's CPU and garbage. Any write to
// the object, by anyone, changes its resourceVersion and so forces a compare.
// A nil *Seen remembers nothing.
type Seen struct {
	mu sync.Mutex
	m  map[string]seenEntry
}

type seenEntry struct {
	resourceVersion string
	hash            [sha256.Size]byte
}

// NewSeen returns an empty Seen.
func NewSeen() *Seen { return &Seen{m: map[string]seenEntry{}} }

func (s *Seen) has(key, resourceVersion string, hash [sha256.Size]byte) bool {
	if s == nil || resourceVersion == "" {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.m[key]
	return ok && e.resourceVersion == resourceVersion && e.hash == hash
}

func (s *Seen) add(key, resourceVersion string, hash [sha256.Size]byte) {
	if s == nil || resourceVersion == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[key] = seenEntry{resourceVersion: resourceVersion, hash: hash}
}

func (s *Seen) forget(key string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, key)
}

// hashOf hashes the JSON form of an apply configuration; encoding/json sorts
// map keys, so equal configurations hash equal.
func hashOf(ac any) ([sha256.Size]byte, error) {
	data, err := json.Marshal(ac)
	if err != nil {
		return [sha256.Size]byte{}, err
	}
	return sha256.Sum256(data), nil
}
