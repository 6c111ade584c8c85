package applyset

import (
	"crypto/sha256"
	"encoding/hex"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// SummaryAnnotation is the annotation a Summarize transform sets on the
// cache's copy of an object, never on the server's: the object's summary
// (see liveSummary), kept when the transform drops the managedFields it
// was computed from.
const SummaryAnnotation = "applyset.database.example.com/owned-fields-sha256"

// Summarize returns a cache transform for objects of type PL that keeps
// what Apply needs of them in a few bytes: it sets the object's summary (the
// hash of its AppliedAnnotation and of the set of fields fieldManager owns)
// as SummaryAnnotation, drops every managedFields entry and the
// AppliedAnnotation (both are in the summary), and then lets trim
// (if not nil) drop what the manager never reads, such as a StatefulSet's
// pod template. The managedFields and templates of the objects an operator
// applies are most of what its cache holds.
//
// Apply compares the summary with that of the desired apply configuration
// (see appliedSummary). Making a summary reads two strings: it converts
// nothing, which matters when a restarted manager lists every object.
// An object without the field manager's entry keeps its managedFields.
// The transform is idempotent, as client-go asks.
func Summarize[L any, PL interface {
	*L
	client.Object
}](fieldManager string, trim func(PL)) func(any) (any, error) {
	return func(in any) (any, error) {
		obj, ok := in.(PL)
		if !ok {
			return in, nil
		}
		// client-go may pass an object of the cache through the transform
		// again: a summarized object has no managedFields left.
		if _, done := summary(obj); done && len(obj.GetManagedFields()) == 0 {
			return obj, nil
		}
		if sum, found := liveSummary(obj, fieldManager); found {
			annotations := obj.GetAnnotations()
			if annotations == nil {
				annotations = map[string]string{}
			}
			annotations[SummaryAnnotation] = hex.EncodeToString(sum[:])
			delete(annotations, AppliedAnnotation) // in the summary
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
// its summary, set by a Summarize transform or made from its managedFields.
// It says whether obj has either.
func ownedHash(obj client.Object, fieldManager string) ([sha256.Size]byte, bool) {
	if sum, ok := summary(obj); ok {
		return sum, true
	}
	return liveSummary(obj, fieldManager)
}
