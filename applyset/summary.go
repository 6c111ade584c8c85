package applyset

import (
	"crypto/sha256"
	"encoding/hex"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// SummaryAnnotation is the annotation a Summarize transform sets on the
// cache's copy of an object, never on the server's: the hash of the fields
// the field manager owns, as Apply would extract them from the object's
// managedFields, which the transform drops.
const SummaryAnnotation = "applyset.database.example.com/owned-fields-sha256"

// Summarize returns a cache transform for objects of type PL that keeps
// what Apply needs of them in a few bytes: it extracts the fields
// fieldManager owns (with client-go's extract function of the kind), sets
// their hash as SummaryAnnotation, drops every managedFields entry, and
// then lets trim (if not nil) drop what the manager never reads, such as a
// StatefulSet's pod template. The managedFields and templates of the
// objects an operator applies are most of what its cache holds.
//
// Apply compares the summary with the hash of the desired apply
// configuration, which equals it exactly when the owned fields equal the
// desired ones (encoding/json writes both the same way). An object whose
// extraction fails keeps its managedFields, and Apply extracts as usual.
// The transform is idempotent, as client-go asks. It remembers the summary
// of the objects whose kind keeps a generation (see summaryMemo): the
// status updates of a StatefulSet, most of its watch events, then cost no
// extraction, which converts the whole object and was a fifth of what the
// manager allocated converging 1000 MySQLs.
func Summarize[L any, PL interface {
	*L
	client.Object
}, A any](fieldManager string, extract func(PL, string) (A, error), trim func(PL)) func(any) (any, error) {
	memo := newSummaryMemo()
	return func(in any) (any, error) {
		obj, ok := in.(PL)
		if !ok {
			return in, nil
		}
		// client-go may pass an object of the cache through the transform
		// again: it must be idempotent, and a summarized object has no
		// managedFields left to extract from.
		if _, done := summary(obj); done && len(obj.GetManagedFields()) == 0 {
			return obj, nil
		}
		fp, remembered := memo.fingerprint(obj, fieldManager)
		sum, found := memo.get(obj.GetUID(), fp)
		if !found {
			if owned, err := extract(obj, fieldManager); err == nil {
				sum, err = hashOf(owned)
				found = err == nil
			}
			if found && remembered {
				memo.add(obj.GetUID(), fp, sum)
			}
		}
		if found {
			annotations := obj.GetAnnotations()
			if annotations == nil {
				annotations = map[string]string{}
			}
			annotations[SummaryAnnotation] = hex.EncodeToString(sum[:])
			obj.SetAnnotations(annotations)
			obj.SetManagedFields(nil)
		}
		if trim != nil {
			trim(obj)
		}
		return obj, nil
	}
}

// summary returns the hash a Summarize transform set on obj, and whether
// there is one.
func summary(obj client.Object) ([sha256.Size]byte, bool) {
	var sum [sha256.Size]byte
	v, ok := obj.GetAnnotations()[SummaryAnnotation]
	if !ok {
		return sum, false
	}
	if n, err := hex.Decode(sum[:], []byte(v)); err != nil || n != len(sum) {
		return sum, false
	}
	return sum, true
}

// ownedHash identifies the state of the fields fieldManager owns on obj:
// its summary, or else the hash of its Apply managedFields entry. It says
// whether obj has either.
func ownedHash(obj client.Object, fieldManager string) ([sha256.Size]byte, bool) {
	if sum, ok := summary(obj); ok {
		return sum, true
	}
	return managedFieldsHash(obj, fieldManager)
}
