package dataplane

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/controller/vocabulary"
)

// TestPendingSwitchover reads the switchover annotation: acted on once,
// refused with why when it cannot be, never acted on twice.
func TestPendingSwitchover(t *testing.T) {
	now := time.Date(2026, 12, 6, 23, 0, 0, 0, time.UTC)
	asked := "db-1@" + now.Add(-time.Minute).Format(time.RFC3339)
	for _, tc := range []struct {
		name      string
		value     string
		preferred *int32
		answered  string
		pending   bool
		target    int
		refused   string
	}{
		{name: "none", pending: false},
		{name: "asked", value: asked, pending: true, target: 1},
		{name: "answered", value: asked, answered: asked, pending: false},
		{name: "asked again", value: "db-1@" + now.Format(time.RFC3339), answered: asked, pending: true, target: 1},
		{name: "Git owns the preference", value: asked, preferred: ptr.To[int32](0), pending: true, target: 1, refused: "spec.preferredPrimary is 0"},
		{name: "no such instance", value: "db-3@" + now.Format(time.RFC3339), pending: true, target: 3, refused: "db-3 is not an instance of db (3 replicas)"},
		{name: "another MySQL's pod", value: "other-1@" + now.Format(time.RFC3339), pending: true, target: -1, refused: "is not an instance"},
		{name: "no time", value: "db-1", pending: true, target: 1, refused: "want <pod>@<RFC 3339 time>"},
		{name: "too old", value: "db-1@" + now.Add(-time.Hour).Format(time.RFC3339), pending: true, target: 1, refused: "more than 10m0s ago"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &databasev1.MySQL{ObjectMeta: metav1.ObjectMeta{Name: "db", Annotations: map[string]string{}},
				Spec: databasev1.MySQLSpec{Replicas: 3, PreferredPrimary: tc.preferred}}
			if tc.value != "" {
				m.Annotations[vocabulary.AnnotationSwitchover] = tc.value
			}
			if tc.answered != "" {
				m.Status.Switchover = &databasev1.SwitchoverStatus{Request: tc.answered}
			}
			req, pending := pendingSwitchover(m, now)
			if pending != tc.pending || (pending && (req.target != tc.target || !strings.Contains(req.refused, tc.refused) ||
				(tc.refused == "") != (req.refused == ""))) {
				t.Fatalf("pending %v, %+v; want %v, target %d, refused %q", pending, req, tc.pending, tc.target, tc.refused)
			}
		})
	}
}

// TestSwitchoverAnswer answers a request once its target is the primary,
// or at once when it is refused.
func TestSwitchoverAnswer(t *testing.T) {
	now := time.Date(2026, 12, 6, 23, 0, 0, 0, time.UTC)
	m := &databasev1.MySQL{ObjectMeta: metav1.ObjectMeta{Name: "db"}, Spec: databasev1.MySQLSpec{Replicas: 3}}
	req := switchoverRequest{value: "db-1@x", target: 1}
	if a := req.answer(m, 0, now); a != nil {
		t.Errorf("answered while db-0 is still the primary: %+v", a)
	}
	if a := req.answer(m, 1, now); a == nil || a.Result != databasev1.SwitchoverDone || a.Request != "db-1@x" || a.Message != "db-1 is the primary" {
		t.Errorf("db-1 primary: %+v", a)
	}
	req.refused = "no"
	if a := req.answer(m, 0, now); a == nil || a.Result != databasev1.SwitchoverRefused || a.Message != "no" {
		t.Errorf("refused: %+v", a)
	}
}
