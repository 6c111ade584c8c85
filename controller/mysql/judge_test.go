package mysql

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/handler"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/controller/dataplane"
	"github.com/example/mysql-operator/controller/outcome"
	"github.com/example/mysql-operator/controller/vocabulary"
	"github.com/example/mysql-operator/internal/ctrltest"
)

// TestJudgeStatus covers every reason judgeStatus can give: the conditions,
// phase, message and observedGeneration it returns, and that it changes
// nothing of its input.
func TestJudgeStatus(t *testing.T) {
	type want struct {
		ready, reconciling, stalled metav1.ConditionStatus // "" means absent
		reason                      string
		phase                       databasev1.Phase
		message                     string
		observed                    int64
	}
	tests := []struct {
		name string
		obs  observation
		err  error
		want want
	}{
		{"succeeded", observation{childrenView: childrenView{counted: true, replicas: 3, readyReplicas: 3}, db: dataplane.Report{Observed: true, Primary: "db-0"}}, nil,
			want{metav1.ConditionTrue, "", "", vocabulary.ReasonSucceeded, databasev1.PhaseRunning, "3/3 replicas ready, primary db-0", 4}},
		{"database progressing", observation{childrenView: childrenView{counted: true, replicas: 3, readyReplicas: 3}, db: dataplane.Report{Observed: true, Primary: "db-0", Waiting: "instance db-2: replication not configured"}}, nil,
			want{metav1.ConditionFalse, metav1.ConditionTrue, "", vocabulary.ReasonDatabaseProgressing, databasev1.PhasePending, "instance db-2: replication not configured", 4}},
		{"errant transactions", observation{db: dataplane.Report{Observed: true, Primary: "db-0", Errant: []string{"db-2"}}}, nil,
			want{metav1.ConditionFalse, "", metav1.ConditionTrue, vocabulary.ReasonErrantTransactions, databasev1.PhaseFailed,
				"instances db-2 have transactions the primary never had: they are out of the Services and are not repaired automatically", 4}},
		{"pod in trouble", observation{podTrouble: "pod db-0 cannot be scheduled: 0/1 nodes", podStallReason: vocabulary.ReasonPodUnschedulable}, nil,
			want{metav1.ConditionFalse, metav1.ConditionTrue, "", vocabulary.ReasonPodUnschedulable, databasev1.PhasePending, "pod db-0 cannot be scheduled: 0/1 nodes", 4}},
		{"pod stalled", observation{podTrouble: "pod db-0, container mysql: ImagePullBackOff", podStallReason: vocabulary.ReasonImagePullFailed, podStalled: true}, nil,
			want{metav1.ConditionFalse, "", metav1.ConditionTrue, vocabulary.ReasonImagePullFailed, databasev1.PhaseFailed, "pod db-0, container mysql: ImagePullBackOff", 4}},
		{"progressing: applied", observation{childrenView: childrenView{counted: true, replicas: 3, readyReplicas: 1}, changed: []string{"StatefulSet/db"}}, nil,
			want{metav1.ConditionFalse, metav1.ConditionTrue, "", vocabulary.ReasonProgressing, databasev1.PhasePending, "Rolling out generation 4: 1/3 replicas ready", 4}},
		{"progressing: waiting", observation{childrenView: childrenView{waiting: "StatefulSet db: Ready: 2/3", counted: true, replicas: 3, readyReplicas: 2}}, nil,
			want{metav1.ConditionFalse, metav1.ConditionTrue, "", vocabulary.ReasonProgressing, databasev1.PhasePending, "Rolling out generation 4: 2/3 replicas ready", 4}},
		{"retrying", observation{}, errors.New("get Secret db-root: connection refused"),
			want{metav1.ConditionFalse, metav1.ConditionTrue, "", vocabulary.ReasonRetrying, databasev1.PhasePending, "get Secret db-root: connection refused", 3}},
		{"secret not found", observation{}, outcome.Stalled(vocabulary.ReasonSecretNotFound, "rootPasswordSecretRef: Secret s not found in namespace ns"),
			want{metav1.ConditionFalse, "", metav1.ConditionTrue, vocabulary.ReasonSecretNotFound, databasev1.PhaseFailed, "rootPasswordSecretRef: Secret s not found in namespace ns", 4}},
		{"secret invalid", observation{}, outcome.Stalled(vocabulary.ReasonSecretInvalid, `rootPasswordSecretRef: Secret s has no key "password"`),
			want{metav1.ConditionFalse, "", metav1.ConditionTrue, vocabulary.ReasonSecretInvalid, databasev1.PhaseFailed, `rootPasswordSecretRef: Secret s has no key "password"`, 4}},
		{"apply rejected", observation{}, outcome.Stalled(vocabulary.ReasonApplyRejected, "StatefulSet.apps db is invalid"),
			want{metav1.ConditionFalse, "", metav1.ConditionTrue, vocabulary.ReasonApplyRejected, databasev1.PhaseFailed, "StatefulSet.apps db is invalid", 4}},
		{"expansion rejected", observation{}, &outcome.Stall{Reason: vocabulary.ReasonVolumeExpansionRejected, Message: "storageSize: cannot grow", Retry: expansionRetry},
			want{metav1.ConditionFalse, "", metav1.ConditionTrue, vocabulary.ReasonVolumeExpansionRejected, databasev1.PhaseFailed, "storageSize: cannot grow", 4}},
		{"child failed", observation{childrenView: childrenView{failed: "PodDisruptionBudget db: broken", counted: true, replicas: 3}}, nil,
			want{metav1.ConditionFalse, "", metav1.ConditionTrue, vocabulary.ReasonChildFailed, databasev1.PhaseFailed, "PodDisruptionBudget db: broken", 4}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := ctrltest.NewMySQL("ns", "db", 3)
			obj.Generation = 4
			obj.Status.ObservedGeneration = 3
			// A MySQL that was Ready: every verdict must replace what it had.
			conditions.MarkTrue(obj, databasev1.ConditionReady, vocabulary.ReasonSucceeded, "3/3 replicas ready")
			before := obj.DeepCopy()
			got := &databasev1.MySQL{ObjectMeta: obj.ObjectMeta, Status: judgeStatus(obj, &tt.obs, tt.err)}
			if !equalStatus(before, obj) {
				t.Fatal("judgeStatus changed its input")
			}
			for typ, w := range map[string]metav1.ConditionStatus{databasev1.ConditionReady: tt.want.ready,
				databasev1.ConditionReconciling: tt.want.reconciling, databasev1.ConditionStalled: tt.want.stalled} {
				c := conditions.Get(got, typ)
				switch {
				case w == "" && c != nil:
					t.Errorf("%s = %s, want absent", typ, c.Status)
				case w != "" && (c == nil || c.Status != w || c.Reason != tt.want.reason):
					t.Errorf("%s = %+v, want %s with reason %s", typ, c, w, tt.want.reason)
				}
			}
			if got.Status.Phase != tt.want.phase || got.Status.Message != tt.want.message || got.Status.ObservedGeneration != tt.want.observed {
				t.Errorf("phase, message, observedGeneration = %s, %q, %d; want %s, %q, %d", got.Status.Phase, got.Status.Message,
					got.Status.ObservedGeneration, tt.want.phase, tt.want.message, tt.want.observed)
			}
			if tt.obs.counted && (got.Status.Replicas != tt.obs.replicas || got.Status.ReadyReplicas != tt.obs.readyReplicas) {
				t.Errorf("replicas %d/%d, want the observed %d/%d", got.Status.ReadyReplicas, got.Status.Replicas, tt.obs.readyReplicas, tt.obs.replicas)
			}
		})
	}
}

// equalStatus says whether a and b have the same status, conditions included.
func equalStatus(a, b *databasev1.MySQL) bool {
	return statusSum(&a.Status) == statusSum(&b.Status) && len(a.Status.Conditions) == len(b.Status.Conditions)
}

// TestRequeue queues a periodic check at low priority, and what a MySQL
// waits for at the priority it had.
func TestRequeue(t *testing.T) {
	low := ptr.To(handler.LowPriority)
	tests := []struct {
		name           string
		waiting, check time.Duration
		want           ctrl.Result
	}{
		{"idle", 0, 10 * time.Second, ctrl.Result{RequeueAfter: 10 * time.Second, Priority: low}},
		{"waiting sooner", time.Second, 10 * time.Second, ctrl.Result{RequeueAfter: time.Second}},
		{"waiting later", time.Minute, 10 * time.Second, ctrl.Result{RequeueAfter: 10 * time.Second, Priority: low}},
		{"no periodic check", time.Second, 0, ctrl.Result{RequeueAfter: time.Second}},
		{"nothing at all", 0, 0, ctrl.Result{}},
	}
	for _, tt := range tests {
		if got := requeue(tt.waiting, tt.check); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: requeue(%v, %v) = %+v, want %+v", tt.name, tt.waiting, tt.check, got, tt.want)
		}
	}
}
