package applyset

import (
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
)

// TestSummarize shows that the summary of an object is made from its
// AppliedAnnotation and its field manager's entry, that the managedFields
// and the AppliedAnnotation are gone, and that a second pass (client-go may
// transform a cached object again) changes nothing.
func TestSummarize(t *testing.T) {
	live := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "ns", Annotations: map[string]string{AppliedAnnotation: "abc"},
			ManagedFields: []metav1.ManagedFieldsEntry{
				{Manager: "op", Operation: metav1.ManagedFieldsOperationApply, APIVersion: "v1", FieldsType: "FieldsV1",
					FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:data":{"f:a":{}}}`)}},
				{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", FieldsType: "FieldsV1",
					FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:data":{"f:b":{}}}`)}},
			}},
		Data: map[string]string{"a": "1", "b": "2"},
	}
	want, ok := liveSummary(live, "op")
	if !ok {
		t.Fatal("no summary of an object with the manager's entry")
	}
	transform := Summarize("op", func(c *corev1.ConfigMap) { delete(c.Data, "b") })
	if _, err := transform(live); err != nil {
		t.Fatal(err)
	}
	got, ok := summary(live)
	if !ok || got != want {
		t.Fatalf("summary %x (found %t), want %x", got, ok, want)
	}
	if len(live.ManagedFields) != 0 || live.Data["b"] != "" || live.Annotations[AppliedAnnotation] != "" {
		t.Errorf("managedFields %v, data %v, annotations %v: want no managedFields or applied hash, and the trimmed key gone",
			live.ManagedFields, live.Data, live.Annotations)
	}
	if _, err := transform(live); err != nil {
		t.Fatal(err)
	}
	if again, _ := summary(live); again != want {
		t.Errorf("a second pass changed the summary to %x", again)
	}
}

// TestLiveSummary: the summary changes with the applied hash and with the
// field set, which loses a field as soon as another manager changes it.
func TestLiveSummary(t *testing.T) {
	cm := func(applied, fields string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{AppliedAnnotation: applied},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "op", Operation: metav1.ManagedFieldsOperationApply, APIVersion: "v1",
				FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(fields)}}}}}
	}
	base, _ := liveSummary(cm("h1", `{"f:data":{"f:a":{}}}`), "op")
	for name, obj := range map[string]*corev1.ConfigMap{
		"another applied state": cm("h2", `{"f:data":{"f:a":{}}}`),
		"a field taken":         cm("h1", `{"f:data":{}}`),
	} {
		if got, _ := liveSummary(obj, "op"); got == base {
			t.Errorf("%s: same summary", name)
		}
	}
	if _, ok := liveSummary(cm("h1", `{}`), "other"); ok {
		t.Error("a summary without the manager's entry")
	}
}

// TestAppliedSummary: the desired summary marks the configuration with the
// hash of the rest of it, is the same when computed again, and is the
// summary of a live object whose entry holds the configuration's fields.
func TestAppliedSummary(t *testing.T) {
	ac := corev1ac.ConfigMap("c", "ns").WithData(map[string]string{"a": "1"})
	sum, err := appliedSummary(ac)
	if err != nil {
		t.Fatal(err)
	}
	applied := ac.Annotations[AppliedAnnotation]
	if applied == "" {
		t.Fatal("no applied annotation")
	}
	again, err := appliedSummary(ac)
	if err != nil || again != sum || ac.Annotations[AppliedAnnotation] != applied {
		t.Errorf("a second pass: %x, %v, annotation %q; want %x, %q", again, err, ac.Annotations[AppliedAnnotation], sum, applied)
	}
	data, err := json.Marshal(ac)
	if err != nil {
		t.Fatal(err)
	}
	fields, err := fieldSet(data, applied)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"f:data":{"f:a":{}},"f:metadata":{"f:annotations":{"f:applyset.database.example.com/applied-sha256":{}}}}`
	if string(fields) != want {
		t.Errorf("field set %s, want %s", fields, want)
	}
	live := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{AppliedAnnotation: applied},
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "op", Operation: metav1.ManagedFieldsOperationApply, APIVersion: "v1",
			FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(want)}}}}}
	if got, _ := liveSummary(live, "op"); got != sum {
		t.Errorf("live summary %x, want the applied summary %x", got, sum)
	}
	other, _ := appliedSummary(corev1ac.ConfigMap("c", "ns").WithData(map[string]string{"a": "2"}))
	if other == sum {
		t.Error("another value, the same summary")
	}
}
