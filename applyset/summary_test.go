package applyset

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	policyv1ac "k8s.io/client-go/applyconfigurations/policy/v1"
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

// TestSummarizeRemembers shows that a Summarize transform extracts an
// object that keeps a generation again only when its summary may have
// changed: not for a status update, but for a new generation, label,
// managedFields entry or UID; and that an object without a generation is
// extracted every time.
func TestSummarizeRemembers(t *testing.T) {
	extractions := 0
	extract := func(p *policyv1.PodDisruptionBudget, fm string) (*policyv1ac.PodDisruptionBudgetApplyConfiguration, error) {
		extractions++
		return policyv1ac.ExtractPodDisruptionBudget(p, fm)
	}
	transform := Summarize("op", extract, nil)
	pdb := func(generation int64, maxUnavailable int, mutate func(*policyv1.PodDisruptionBudget)) *policyv1.PodDisruptionBudget {
		v := intstr.FromInt32(int32(maxUnavailable))
		p := &policyv1.PodDisruptionBudget{
			TypeMeta: metav1.TypeMeta{APIVersion: "policy/v1", Kind: "PodDisruptionBudget"},
			ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: "u1", Generation: generation, Labels: map[string]string{"a": "1"},
				ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "op", Operation: metav1.ManagedFieldsOperationApply, APIVersion: "policy/v1",
					FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{"f:labels":{"f:a":{}}},"f:spec":{"f:maxUnavailable":{}}}`)}}}},
			Spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: &v},
		}
		if mutate != nil {
			mutate(p)
		}
		return p
	}
	want := func(maxUnavailable int32, label string) [32]byte {
		sum, err := hashOf(policyv1ac.PodDisruptionBudget("p", "ns").WithLabels(map[string]string{"a": label}).
			WithSpec(policyv1ac.PodDisruptionBudgetSpec().WithMaxUnavailable(intstr.FromInt32(maxUnavailable))))
		if err != nil {
			t.Fatal(err)
		}
		return sum
	}
	steps := []struct {
		name        string
		obj         *policyv1.PodDisruptionBudget
		extractions int
		want        [32]byte
	}{
		{"first sight", pdb(1, 1, nil), 1, want(1, "1")},
		{"status update", pdb(1, 1, func(p *policyv1.PodDisruptionBudget) { p.ResourceVersion, p.Status.CurrentHealthy = "2", 3 }), 1, want(1, "1")},
		{"new generation", pdb(2, 2, nil), 2, want(2, "1")},
		{"new label value", pdb(2, 2, func(p *policyv1.PodDisruptionBudget) { p.Labels["a"] = "2" }), 3, want(2, "2")},
		{"label taken by another manager", pdb(2, 2, func(p *policyv1.PodDisruptionBudget) {
			p.Labels["a"] = "3"
			p.ManagedFields[0].FieldsV1.Raw = []byte(`{"f:spec":{"f:maxUnavailable":{}}}`)
		}), 4, func() [32]byte {
			sum, _ := hashOf(policyv1ac.PodDisruptionBudget("p", "ns").WithSpec(policyv1ac.PodDisruptionBudgetSpec().WithMaxUnavailable(intstr.FromInt32(2))))
			return sum
		}()},
		{"recreated", pdb(2, 2, func(p *policyv1.PodDisruptionBudget) { p.UID = "u2" }), 5, want(2, "1")},
		{"no generation", pdb(0, 2, nil), 6, want(2, "1")},
		{"no generation, again", pdb(0, 2, nil), 7, want(2, "1")},
	}
	for _, s := range steps {
		if _, err := transform(s.obj); err != nil {
			t.Fatal(err)
		}
		got, ok := summary(s.obj)
		if extractions != s.extractions || !ok || got != s.want {
			t.Errorf("%s: %d extractions, summary %x (found %t); want %d, %x", s.name, extractions, got, ok, s.extractions, s.want)
		}
	}
}
