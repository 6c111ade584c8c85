package applyset

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/client-go/applyconfigurations"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/lru"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
)

// AppliedAnnotation is the annotation Apply sets on every member: the hash
// of the rest of the apply configuration it applied. With the set of
// fields the field manager owns, it says what the owned fields hold
// without reading them: server-side apply takes a field from a manager as
// soon as anyone else changes or removes it, so while the manager's entry
// holds every field it applied, each keeps the value it applied.
const AppliedAnnotation = "applyset.database.example.com/applied-sha256"

// strippedFields are the fields the API server leaves out of every
// manager's field set (apimachinery's stripMetaManager).
var strippedFields = fieldpath.NewSet(
	fieldpath.MakePathOrDie("apiVersion"),
	fieldpath.MakePathOrDie("kind"),
	fieldpath.MakePathOrDie("metadata"),
	fieldpath.MakePathOrDie("metadata", "name"),
	fieldpath.MakePathOrDie("metadata", "namespace"),
	fieldpath.MakePathOrDie("metadata", "creationTimestamp"),
	fieldpath.MakePathOrDie("metadata", "selfLink"),
	fieldpath.MakePathOrDie("metadata", "uid"),
	fieldpath.MakePathOrDie("metadata", "clusterName"),
	fieldpath.MakePathOrDie("metadata", "generation"),
	fieldpath.MakePathOrDie("metadata", "managedFields"),
	fieldpath.MakePathOrDie("metadata", "resourceVersion"),
)

// summaryMemoSize bounds the desired summaries appliedSummary remembers:
// the nine children of each of 1800 MySQLs, about 3 MB when full.
const summaryMemoSize = 16384

// summaryMemo remembers the summary of each apply configuration by the
// hash of its JSON: converting a StatefulSet's configuration to its field
// set is most of what a reconcile that compares its children allocates,
// and a MySQL's children stay the same through most of its reconciles.
var summaryMemo = lru.New(summaryMemoSize)

// typeConverter converts built-in objects to typed values, with client-go's
// copy of the API server's schema.
var typeConverter = sync.OnceValue(func() managedfields.TypeConverter {
	return applyconfigurations.NewTypeConverter(clientgoscheme.Scheme)
})

// liveSummary hashes the AppliedAnnotation of obj and the Apply
// managedFields entry of fieldManager (its API version and field set), and
// says whether obj has that entry.
func liveSummary(obj client.Object, fieldManager string) ([sha256.Size]byte, bool) {
	for _, e := range obj.GetManagedFields() {
		if e.Manager != fieldManager || e.Operation != metav1.ManagedFieldsOperationApply || e.Subresource != "" || e.FieldsV1 == nil {
			continue
		}
		return summaryOf(obj.GetAnnotations()[AppliedAnnotation], e.APIVersion, e.FieldsV1.Raw), true
	}
	return [sha256.Size]byte{}, false
}

// appliedSummary sets the AppliedAnnotation of ac and returns the summary
// an object has right after ac was applied to it: the hash of that
// annotation, ac's API version and the set of fields ac holds, as the API
// server records it in the applier's managedFields entry. ac is marshalled
// once: the JSON that the applied hash is made of is also what a miss of
// the memo converts to a field set.
func appliedSummary(ac applyConfiguration) ([sha256.Size]byte, error) {
	meta := answerMeta(ac)
	if meta == nil {
		return [sha256.Size]byte{}, fmt.Errorf("%T has no metadata", ac)
	}
	delete(meta.Annotations, AppliedAnnotation)
	// encoding/json sorts map keys: equal configurations hash equal.
	data, err := json.Marshal(ac)
	if err != nil {
		return [sha256.Size]byte{}, err
	}
	core := sha256.Sum256(data)
	applied := hex.EncodeToString(core[:])
	if meta.Annotations == nil {
		meta.Annotations = map[string]string{}
	}
	meta.Annotations[AppliedAnnotation] = applied
	if sum, ok := summaryMemo.Get(core); ok {
		return sum.([sha256.Size]byte), nil
	}
	fields, err := fieldSet(data, applied)
	if err != nil {
		return [sha256.Size]byte{}, err
	}
	sum := summaryOf(applied, deref(ac.GetAPIVersion()), fields)
	summaryMemo.Add(core, sum)
	return sum, nil
}

// fieldSet returns the field set of the apply configuration whose JSON is
// data once its AppliedAnnotation is applied, as the API server writes it
// in FieldsV1: converted as an apply request's body is, less the fields
// the server strips.
func fieldSet(data []byte, applied string) ([]byte, error) {
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(data); err != nil {
		return nil, err
	}
	annotations := u.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[AppliedAnnotation] = applied
	u.SetAnnotations(annotations)
	tv, err := typeConverter().ObjectToTyped(u, typed.AllowDuplicates)
	if err != nil {
		return nil, fmt.Errorf("type %s: %w", u.GetKind(), err)
	}
	set, err := tv.ToFieldSet()
	if err != nil {
		return nil, err
	}
	return set.Difference(strippedFields).ToJSON()
}

// summaryOf hashes an applied hash and an API version, each closed by a
// zero byte, and a FieldsV1 field set.
func summaryOf(applied, apiVersion string, fields []byte) [sha256.Size]byte {
	h := sha256.New()
	writeStrings(h, applied, apiVersion)
	h.Write(fields)
	var sum [sha256.Size]byte
	copy(sum[:], h.Sum(nil))
	return sum
}

// writeStrings writes each string to h closed by a zero byte.
func writeStrings(h hash.Hash, ss ...string) {
	for _, s := range ss {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
}
