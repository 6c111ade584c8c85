package applyset

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
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

// TestSeenSummary: a member whose summary shows its desired state is
// unchanged and needs no entry, which is dropped; any other keeps its entry.
func TestSeenSummary(t *testing.T) {
	h1 := sha256.Sum256([]byte("a: 1"))
	h2 := sha256.Sum256([]byte("a: 2"))
	summarized := func(sum [32]byte) *corev1.ConfigMap {
		cm := live("u1", "2", nil)
		cm.Annotations = map[string]string{SummaryAnnotation: hex.EncodeToString(sum[:])}
		return cm
	}
	const mgr = "op"
	s := NewSeen()
	s.applied("k", "u1", "1", 0, h1)
	if s.unchanged("k", summarized(h2), mgr, h1) {
		t.Error("a summary of another state showed the desired one")
	}
	if s.unchanged("k", live("u1", "2", map[string]string{mgr: `{"f:data":{"f:a":{}}}`}), mgr, h1) {
		t.Error("managedFields of another state showed the desired one")
	}
	if _, kept := s.m["k"]; !kept {
		t.Error("forgot a member whose cached copy does not show its desired state")
	}
	if !s.unchanged("k", summarized(h1), mgr, h1) {
		t.Error("a summary of the desired state did not show it")
	}
	if _, kept := s.m["k"]; kept {
		t.Error("kept the entry of a member the cache shows as desired")
	}
	var none *Seen
	if !none.unchanged("k", summarized(h1), mgr, h1) {
		t.Error("a nil Seen changed what a summary shows")
	}
}

// live returns a ConfigMap as the cache would hold it: with uid, version
// and the managedFields entries of the given managers.
func live(uid, resourceVersion string, fields map[string]string) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "ns", UID: types.UID(uid), ResourceVersion: resourceVersion}}
	for manager, raw := range fields {
		cm.ManagedFields = append(cm.ManagedFields, metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationApply,
			APIVersion: "v1", FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(raw)}})
	}
	return cm
}

// TestSeen: a member whose summary differs in form from its desired one
// is unchanged while its summary is the one read at the version applied.
func TestSeen(t *testing.T) {
	h1 := sha256.Sum256([]byte("a: 1"))
	h2 := sha256.Sum256([]byte("a: 2"))
	const mgr = "op"
	own := map[string]string{mgr: `{"f:data":{"f:a":{}}}`}
	var none *Seen
	none.applied("k", "u1", "1", 0, h1)
	if none.unchanged("k", live("u1", "1", own), mgr, h1) {
		t.Error("a nil Seen remembered")
	}

	s := NewSeen()
	s.applied("k", "u1", "1", 0, h1)
	tests := []struct {
		name string
		live *corev1.ConfigMap
		hash [32]byte
		want bool
	}{
		{"the version applied", live("u1", "1", own), h1, true},
		{"status moved: new version, same owned fields", live("u1", "2", own), h1, true},
		{"another desired state", live("u1", "1", own), h2, false},
		{"recreated: another uid", live("u2", "1", own), h1, false},
		{"a field taken by another manager", live("u1", "3", map[string]string{mgr: `{"f:data":{}}`, "kubectl": `{"f:data":{"f:a":{}}}`}), h1, false},
		{"managedFields cleared", live("u1", "4", nil), h1, false},
	}
	for _, tt := range tests {
		if got := s.unchanged("k", tt.live, mgr, tt.hash); got != tt.want {
			t.Errorf("%s: unchanged = %v, want %v", tt.name, got, tt.want)
		}
	}

	// Just applied: only uid and version are known. Until a read shows the
	// member, and for AwaitCache at most, a cache without it is trusted to lag.
	now := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	s.now = func() time.Time { return now }
	s.applied("k", "u1", "5", 3, h1)
	if !s.awaiting("k", h1) || s.awaiting("k", h2) || s.awaiting("other", h1) {
		t.Error("awaiting: want only the member just applied, as applied")
	}
	now = now.Add(AwaitCache)
	if s.awaiting("k", h1) {
		t.Error("still awaiting after AwaitCache")
	}
	now = now.Add(-time.Second)
	// The first read at the applied version learns the owned fields.
	if s.unchanged("k", live("u1", "6", own), mgr, h1) {
		t.Error("matched a later version before learning the owned fields")
	}
	if !s.unchanged("k", live("u1", "5", own), mgr, h1) {
		t.Error("did not match the applied version")
	}
	if !s.unchanged("k", live("u1", "7", own), mgr, h1) {
		t.Error("did not learn the owned fields at the applied version")
	}
	if s.awaiting("k", h1) {
		t.Error("still awaiting a member the cache has shown")
	}
	// A read of the member from before the apply (an older generation) is
	// behind; the same or a later generation is not.
	older := live("u1", "4", own)
	older.SetGeneration(2)
	current := live("u1", "6", own)
	current.SetGeneration(3)
	if !s.behind("k", older) || s.behind("k", current) || s.behind("other", older) {
		t.Error("behind: want only an older generation of the member applied")
	}
	s.forget("k")
	if s.unchanged("k", live("u1", "5", own), mgr, h1) {
		t.Error("kept a forgotten entry")
	}
}
