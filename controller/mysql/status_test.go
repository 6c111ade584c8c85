package mysql

import (
	"encoding/json"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	"github.com/example/mysql-operator/controller/children"
	"github.com/example/mysql-operator/internal/ctrltest"
	"github.com/example/mysql-operator/internal/testenv"
)

// TestStatusViewKeepsKstatus checks that kstatus reads the trimmed StatefulSet
// it is computed on as it reads the whole one.
func TestStatusViewKeepsKstatus(t *testing.T) {
	whole := func(mut func(*appsv1.StatefulSet)) *appsv1.StatefulSet {
		data, err := json.Marshal(children.StatefulSet(ctrltest.NewMySQL("ns", "db", 3), children.Agent{Image: ctrltest.AgentImage}))
		if err != nil {
			t.Fatal(err)
		}
		sts := &appsv1.StatefulSet{}
		if err := json.Unmarshal(data, sts); err != nil {
			t.Fatal(err)
		}
		sts.Generation = 2
		sts.Status = appsv1.StatefulSetStatus{ObservedGeneration: 2, Replicas: 3, ReadyReplicas: 3, CurrentReplicas: 3, UpdatedReplicas: 3, CurrentRevision: "a", UpdateRevision: "a"}
		mut(sts)
		return sts
	}
	now := metav1.Now()
	tests := map[string]*appsv1.StatefulSet{
		"current":             whole(func(*appsv1.StatefulSet) {}),
		"generation not seen": whole(func(s *appsv1.StatefulSet) { s.Status.ObservedGeneration = 1 }),
		"not ready":           whole(func(s *appsv1.StatefulSet) { s.Status.ReadyReplicas = 1 }),
		"rolling":             whole(func(s *appsv1.StatefulSet) { s.Status.UpdateRevision = "b"; s.Status.UpdatedReplicas = 1 }),
		"partitioned": whole(func(s *appsv1.StatefulSet) {
			s.Spec.UpdateStrategy.RollingUpdate = &appsv1.RollingUpdateStatefulSetStrategy{Partition: ptr.To[int32](2)}
		}),
		"scaling in":         whole(func(s *appsv1.StatefulSet) { s.Status.Replicas = 4 }),
		"deleting":           whole(func(s *appsv1.StatefulSet) { s.DeletionTimestamp = &now }),
		"on delete strategy": whole(func(s *appsv1.StatefulSet) { s.Spec.UpdateStrategy.Type = appsv1.OnDeleteStatefulSetStrategyType }),
	}
	for name, sts := range tests {
		// The operator's StatefulSet is OnDelete, which kstatus calls
		// Current at once: the view reads it as a RollingUpdate one.
		whole := sts.DeepCopy()
		if whole.Spec.UpdateStrategy.Type == appsv1.OnDeleteStatefulSetStrategyType {
			whole.Spec.UpdateStrategy = appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType}
		}
		want, err := kstatusOf(testenv.Scheme, whole)
		if err != nil {
			t.Fatal(err)
		}
		got, err := kstatusOf(testenv.Scheme, statusView(sts))
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != want.Status || got.Message != want.Message {
			t.Errorf("%s: view reads %s %q, whole reads %s %q", name, got.Status, got.Message, want.Status, want.Message)
		}
	}
	rolling := tests["rolling"]
	if res, err := kstatusOf(testenv.Scheme, statusView(rolling)); err != nil || res.Status == status.CurrentStatus {
		t.Errorf("an OnDelete StatefulSet whose pods run an old revision reads %+v, %v: want InProgress", res, err)
	}
}
