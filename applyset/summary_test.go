package applyset

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
)

// TestSummarize shows that the summary of an object equals the hash of the
// apply configuration its owned fields were applied from, that the
// managedFields are gone, and that a second pass (client-go may transform
// a cached object again) changes nothing.
func TestSummarize(t *testing.T) {
	live := &corev1.ConfigMap{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "ns", ManagedFields: []metav1.ManagedFieldsEntry{
			{Manager: "op", Operation: metav1.ManagedFieldsOperationApply, APIVersion: "v1", FieldsType: "FieldsV1",
				FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:data":{"f:a":{}}}`)}},
			{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", FieldsType: "FieldsV1",
				FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:data":{"f:b":{}}}`)}},
		}},
		Data: map[string]string{"a": "1", "b": "2"},
	}
	transform := Summarize("op", corev1ac.ExtractConfigMap, func(c *corev1.ConfigMap) { delete(c.Data, "b") })
	if _, err := transform(live); err != nil {
		t.Fatal(err)
	}
	want, err := hashOf(corev1ac.ConfigMap("c", "ns").WithData(map[string]string{"a": "1"}))
	if err != nil {
		t.Fatal(err)
	}
	got, ok := summary(live)
	if !ok || got != want {
		t.Fatalf("summary %x (found %t), want the hash of the owned fields %x", got, ok, want)
	}
	if len(live.ManagedFields) != 0 || live.Data["b"] != "" {
		t.Errorf("managedFields %v, data %v: want none, and the trimmed key gone", live.ManagedFields, live.Data)
	}
	if _, err := transform(live); err != nil {
		t.Fatal(err)
	}
	if again, _ := summary(live); again != want {
		t.Errorf("a second pass changed the summary to %x", again)
	}
}
