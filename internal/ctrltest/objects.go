package ctrltest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	eventsv1 "k8s.io/api/events/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/internal/testenv"
)

// NewMySQL returns a MariaDB 10.11 MySQL with an Argo CD label, which no
// child may copy.
func NewMySQL(ns, name string, replicas int32) *databasev1.MySQL {
	return &databasev1.MySQL{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"argocd.argoproj.io/instance": "team-app"}},
		Spec:       databasev1.MySQLSpec{Replicas: replicas, Engine: databasev1.EngineMariaDB, Version: "10.11"},
	}
}

// Create creates m and returns its key.
func (e *Env) Create(t *testing.T, m *databasev1.MySQL) client.ObjectKey {
	t.Helper()
	if err := e.Client.Create(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	return client.ObjectKeyFromObject(m)
}

// SetReplicas patches the replicas of m.
func (e *Env) SetReplicas(t *testing.T, m *databasev1.MySQL, replicas int32) {
	t.Helper()
	patch := client.MergeFrom(m.DeepCopy())
	m.Spec.Replicas = replicas
	if err := e.Client.Patch(context.Background(), m, patch); err != nil {
		t.Fatal(err)
	}
}

// WaitKstatus waits up to 30 seconds for the kstatus of the MySQL key to be want.
func (e *Env) WaitKstatus(t *testing.T, key client.ObjectKey, want status.Status) {
	t.Helper()
	testenv.WaitKstatus(t, e.Client, key, want, 30*time.Second)
}

// MarkStatefulSetReady does what the StatefulSet controller and kubelets
// would: envtest runs neither.
func (e *Env) MarkStatefulSetReady(t *testing.T, key client.ObjectKey) {
	t.Helper()
	sts := &appsv1.StatefulSet{}
	e.SetStatus(t, key, sts, func() {
		n := *sts.Spec.Replicas
		sts.Status = appsv1.StatefulSetStatus{ObservedGeneration: sts.Generation, Replicas: n, ReadyReplicas: n,
			AvailableReplicas: n, CurrentReplicas: n, UpdatedReplicas: n, CurrentRevision: "r1", UpdateRevision: "r1"}
	})
}

// MarkPDBReady does what the disruption controller would.
func (e *Env) MarkPDBReady(t *testing.T, key client.ObjectKey) {
	t.Helper()
	pdb := &policyv1.PodDisruptionBudget{}
	e.SetStatus(t, key, pdb, func() {
		pdb.Status = policyv1.PodDisruptionBudgetStatus{ObservedGeneration: pdb.Generation, CurrentHealthy: 3, DesiredHealthy: 2, ExpectedPods: 3, DisruptionsAllowed: 1}
	})
}

// SetStatus reads the child key into obj, lets set change its status and
// updates it, until the update goes through.
func (e *Env) SetStatus(t *testing.T, key client.ObjectKey, obj client.Object, set func()) {
	t.Helper()
	Eventually(t, fmt.Sprintf("%T status to be updated", obj), func(ctx context.Context) (bool, error) {
		if err := e.Client.Get(ctx, key, obj); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		set()
		err := e.Client.Status().Update(ctx, obj)
		if apierrors.IsConflict(err) {
			return false, nil
		}
		return err == nil, client.IgnoreNotFound(err)
	})
}

// Condition returns the condition of type t among conds, nil when absent.
func Condition(conds []metav1.Condition, t string) *metav1.Condition {
	for i := range conds {
		if conds[i].Type == t {
			return &conds[i]
		}
	}
	return nil
}

// HasEvent says whether ns has an event of reason whose note contains notePart.
func (e *Env) HasEvent(ctx context.Context, ns, reason, notePart string) (bool, error) {
	list := &eventsv1.EventList{}
	if err := e.Client.List(ctx, list, client.InNamespace(ns)); err != nil {
		return false, err
	}
	return slices.ContainsFunc(list.Items, func(ev eventsv1.Event) bool {
		return ev.Reason == reason && strings.Contains(ev.Note, notePart)
	}), nil
}

// CountEvents counts the events of reason in ns, repeats folded into a
// series included.
func (e *Env) CountEvents(t *testing.T, ns, reason string) int {
	t.Helper()
	events := &eventsv1.EventList{}
	if err := e.Client.List(context.Background(), events, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, ev := range events.Items {
		switch {
		case ev.Reason != reason:
		case ev.Series != nil:
			n += int(ev.Series.Count)
		default:
			n++
		}
	}
	return n
}
