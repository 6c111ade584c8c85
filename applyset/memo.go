package applyset

import (
	"crypto/sha256"
	"encoding/binary"
	"hash"
	"slices"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/lru"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// summaryMemoSize bounds the objects a Summarize transform remembers, per
// kind: four times the StatefulSets of the 1000 MySQLs one manager is
// advised to run, under a megabyte when full.
const summaryMemoSize = 4096

// summaryMemo remembers, by UID, the summary of the objects a Summarize
// transform extracted, with the fingerprint of what that summary depends
// on. The fields a manager owns keep their values while its managedFields
// entry is unchanged (see Seen), except when the manager itself applies new
// values to the same fields: those are in the spec, whose changes raise the
// generation, or in the labels, annotations, owner references and
// finalizers, which the fingerprint holds. So only objects that keep a
// generation are remembered (a ConfigMap's data changes without one): a
// status update leaves the fingerprint as it was.
type summaryMemo struct{ entries *lru.Cache }

type memoEntry struct {
	fingerprint, summary [sha256.Size]byte
}

func newSummaryMemo() *summaryMemo { return &summaryMemo{entries: lru.New(summaryMemoSize)} }

// fingerprint hashes what the summary of obj depends on, and says whether
// obj may be remembered: it keeps a generation and has an Apply entry of
// fieldManager.
func (m *summaryMemo) fingerprint(obj client.Object, fieldManager string) ([sha256.Size]byte, bool) {
	var fp [sha256.Size]byte
	if obj.GetGeneration() == 0 || obj.GetUID() == "" {
		return fp, false
	}
	fields, ok := managedFieldsHash(obj, fieldManager)
	if !ok {
		return fp, false
	}
	h := sha256.New()
	h.Write(fields[:])
	h.Write(binary.BigEndian.AppendUint64(nil, uint64(obj.GetGeneration())))
	writeMap(h, obj.GetLabels())
	writeMap(h, obj.GetAnnotations())
	for _, o := range obj.GetOwnerReferences() {
		writeStrings(h, o.APIVersion, o.Kind, o.Name, string(o.UID))
		h.Write([]byte{flag(o.Controller), flag(o.BlockOwnerDeletion)})
	}
	writeStrings(h, obj.GetFinalizers()...)
	copy(fp[:], h.Sum(nil))
	return fp, true
}

// get returns the summary remembered for uid at fingerprint fp.
func (m *summaryMemo) get(uid types.UID, fp [sha256.Size]byte) ([sha256.Size]byte, bool) {
	if v, ok := m.entries.Get(uid); ok {
		if e := v.(memoEntry); e.fingerprint == fp {
			return e.summary, true
		}
	}
	return [sha256.Size]byte{}, false
}

// add remembers the summary sum of uid at fingerprint fp.
func (m *summaryMemo) add(uid types.UID, fp, sum [sha256.Size]byte) {
	m.entries.Add(uid, memoEntry{fingerprint: fp, summary: sum})
}

// writeMap writes the entries of a map to h in key order, each key and
// value closed by a zero byte, the map by another.
func writeMap(h hash.Hash, m map[string]string) {
	keys := make([]string, 0, len(m))
	for k := range m {
		if k != SummaryAnnotation {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		writeStrings(h, k, m[k])
	}
	h.Write([]byte{0})
}

// writeStrings writes each string to h closed by a zero byte.
func writeStrings(h hash.Hash, ss ...string) {
	for _, s := range ss {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
}

// flag is 1 for a pointer to true, 2 for one to false, 0 for nil.
func flag(b *bool) byte {
	switch {
	case b == nil:
		return 0
	case *b:
		return 1
	}
	return 2
}
