package applyset

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestID(t *testing.T) {
	tests := []struct {
		name   string
		parent Parent
		want   string
	}{
		{
			// The test vector of kubectl's pkg/cmd/apply/applyset.go.
			name:   "kubectl vector",
			parent: Parent{Name: "my-set", Namespace: "test", GroupKind: schema.GroupKind{Kind: "Secret"}},
			want:   "applyset-0eFHV8ySqp7XoShsGvyWFQD3s96yqwHmzc4e0HR1dsY-v1",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.parent.ID(); got != tt.want {
				t.Errorf("ID() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestParentAnnotations(t *testing.T) {
	got := ParentAnnotations("mysql-operator/v1", []schema.GroupKind{
		{Group: "apps", Kind: "StatefulSet"}, {Kind: "Secret"}, {Group: "policy", Kind: "PodDisruptionBudget"}, {Kind: "ConfigMap"},
	})
	want := "ConfigMap,PodDisruptionBudget.policy,Secret,StatefulSet.apps"
	if got[AnnotationGroupKinds] != want {
		t.Errorf("contains-group-kinds = %q, want %q", got[AnnotationGroupKinds], want)
	}
	if got[AnnotationTooling] != "mysql-operator/v1" {
		t.Errorf("tooling = %q", got[AnnotationTooling])
	}
}

func TestSeen(t *testing.T) {
	h1, _ := hashOf(map[string]string{"a": "1"})
	h2, _ := hashOf(map[string]string{"a": "2"})
	var none *Seen
	none.add("k", "1", h1)
	if none.has("k", "1", h1) {
		t.Error("a nil Seen remembered")
	}
	s := NewSeen()
	s.add("k", "1", h1)
	switch {
	case !s.has("k", "1", h1):
		t.Error("forgot an entry")
	case s.has("k", "2", h1):
		t.Error("matched another resourceVersion: a write by anyone must force a compare")
	case s.has("k", "1", h2):
		t.Error("matched another desired state")
	}
	s.forget("k")
	if s.has("k", "1", h1) {
		t.Error("kept a forgotten entry")
	}
}
