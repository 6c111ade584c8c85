package mysql

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/fluxcd/pkg/runtime/conditions"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/applyset"
	"github.com/example/mysql-operator/controller/vocabulary"
	"github.com/example/mysql-operator/internal/ctrltest"
)

// reconcileCount reads controller-runtime's reconcile counter of the controller.
func reconcileCount(t *testing.T) float64 {
	t.Helper()
	return ctrltest.ReconcileCount(t, "mysql")
}

// TestEndOfLifeReportedOnce creates a MySQL of a version at its end of
// life: its condition says so, and one event does, however many
// reconciles run before and after the cache shows the status write.
func TestEndOfLifeReportedOnce(t *testing.T) {
	startManager(t)
	ns := env.NewNamespace(t)
	m := ctrltest.NewMySQL(ns, "old", 1)
	m.Spec.Engine, m.Spec.Version = databasev1.EngineMySQL, "8.0"
	key := env.Create(t, m)
	ctrltest.Eventually(t, "the EndOfLife condition", func(ctx context.Context) (bool, error) {
		err := env.Client.Get(ctx, key, m)
		return conditions.IsTrue(m, databasev1.ConditionEndOfLife), err
	})
	count := reconcileCount(t)
	env.MarkStatefulSetReady(t, key)
	ctrltest.Eventually(t, "two more reconciles", func(context.Context) (bool, error) { return reconcileCount(t) >= count+2, nil })
	ctrltest.Eventually(t, "an EndOfLife event", func(context.Context) (bool, error) { return env.CountEvents(t, ns, vocabulary.EventEndOfLife) > 0, nil })
	if n := env.CountEvents(t, ns, vocabulary.EventEndOfLife); n != 1 {
		t.Errorf("%d EndOfLife events, want 1", n)
	}
}

// TestChildren drives one MySQL through its life: children created as an
// ApplySet, status by kstatus, a no-op reconcile, drift reverted, scale-in pruning.
func TestChildren(t *testing.T) {
	var rec *Reconciler
	writes, _ := startManager(t, func(r *Reconciler) { rec = r })
	ctx := context.Background()
	ns := env.NewNamespace(t)
	m := ctrltest.NewMySQL(ns, "db", 3)
	key := env.Create(t, m)
	id := applyset.Parent{Name: "db", Namespace: ns, GroupKind: databasev1.GroupVersion.WithKind("MySQL").GroupKind()}.ID()

	children := []client.Object{
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "db-root"}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "db-operator"}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "db-config"}},
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "db-headless"}},
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "db"}},
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "db-primary"}},
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "db-replicas"}},
		&appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "db"}},
		&policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "db"}},
	}
	t.Run("children are one ApplySet", func(t *testing.T) {
		ctrltest.Eventually(t, "the ApplySet parent label", func(ctx context.Context) (bool, error) {
			err := env.Client.Get(ctx, key, m)
			return m.Labels[applyset.LabelID] != "", err
		})
		if m.Labels[applyset.LabelID] != id {
			t.Errorf("parent label %s = %q, want %q", applyset.LabelID, m.Labels[applyset.LabelID], id)
		}
		if got := m.Annotations[applyset.AnnotationGroupKinds]; got != "ConfigMap,PodDisruptionBudget.policy,Secret,Service,StatefulSet.apps" {
			t.Errorf("contains-group-kinds = %q", got)
		}
		if got := m.Annotations[applyset.AnnotationTooling]; got != vocabulary.Tooling {
			t.Errorf("tooling = %q", got)
		}
		for _, c := range children {
			name := c.GetName()
			ctrltest.Eventually(t, fmt.Sprintf("%T %s to be applied", c, name), func(ctx context.Context) (bool, error) {
				err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, c)
				return err == nil && slices.ContainsFunc(c.GetManagedFields(), func(e metav1.ManagedFieldsEntry) bool {
					return e.Manager == vocabulary.FieldManager && e.Operation == metav1.ManagedFieldsOperationApply
				}), client.IgnoreNotFound(err)
			})
			if got := c.GetLabels()[applyset.LabelPartOf]; got != id {
				t.Errorf("%T %s: part-of = %q, want %q", c, name, got, id)
			}
			if _, copied := c.GetLabels()["argocd.argoproj.io/instance"]; copied {
				t.Errorf("%T %s copies the parent's Argo CD label", c, name)
			}
			ref := metav1.GetControllerOf(c)
			if _, secret := c.(*corev1.Secret); secret {
				// Retained volumes keep the passwords that open them.
				if ref != nil {
					t.Errorf("Secret %s is owned by %+v; with volumeDeletionPolicy Retain it outlives the MySQL", name, ref)
				}
			} else if ref == nil || ref.UID != m.UID || ref.Kind != "MySQL" {
				t.Errorf("%T %s: controller owner = %+v, want MySQL %s", c, name, ref, m.UID)
			}
		}
		ctrltest.Eventually(t, "an Applied event", func(ctx context.Context) (bool, error) {
			return env.HasEvent(ctx, ns, vocabulary.EventApplied, "ConfigMap/db-config created, Service/db-headless created, Service/db created, "+
				"Service/db-primary created, Service/db-replicas created, StatefulSet/db created")
		})
	})

	// The servers live as long as the test, not as a subtest.
	env.MarkStatefulSetReady(t, client.ObjectKey{Namespace: ns, Name: "db"})
	env.MarkPDBReady(t, client.ObjectKey{Namespace: ns, Name: "db"})
	env.WaitKstatus(t, key, status.InProgressStatus)
	env.ServePods(t, m, 0, 3)
	t.Run("Current once the StatefulSet, the PDB and the database are ready", func(t *testing.T) {
		env.MarkStatefulSetReady(t, client.ObjectKey{Namespace: ns, Name: "db"})
		env.WaitKstatus(t, key, status.CurrentStatus)
		if err := env.Client.Get(ctx, key, m); err != nil {
			t.Fatal(err)
		}
		if m.Status.Phase != databasev1.PhaseRunning || m.Status.ReadyReplicas != 3 || m.Status.ObservedGeneration != m.Generation {
			t.Errorf("status = %+v, want Running with 3 ready at generation %d", m.Status, m.Generation)
		}
		if m.Status.CurrentPrimary != "db-0" || len(m.Status.Instances) != 3 {
			t.Errorf("primary %q, instances %+v: want db-0 and 3 instances", m.Status.CurrentPrimary, m.Status.Instances)
		}
		for i, in := range m.Status.Instances {
			want := databasev1.RoleReplica
			if i == 0 {
				want = databasev1.RolePrimary
			}
			if in.Role != want || !in.Ready {
				t.Errorf("instance %s: role %s ready %t (%s), want a ready %s", in.Name, in.Role, in.Ready, in.Message, want)
			}
		}
		if m.Status.Selector != "app.kubernetes.io/instance=db,app.kubernetes.io/name=mysql" {
			t.Errorf("selector = %q", m.Status.Selector)
		}
	})

	t.Run("a reconcile with no change writes nothing", func(t *testing.T) {
		before := writes.Snapshot()
		count := reconcileCount(t)
		// A field the operator does not own, changed by another manager,
		// wakes the reconciler through its StatefulSet watch.
		sts := &appsv1.StatefulSet{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "db"}, sts); err != nil {
			t.Fatal(err)
		}
		patch := client.MergeFrom(sts.DeepCopy())
		metav1.SetMetaDataAnnotation(&sts.ObjectMeta, "team.example.com/owner", "dba")
		if err := env.Client.Patch(ctx, sts, patch, client.FieldOwner("kubectl-annotate")); err != nil {
			t.Fatal(err)
		}
		ctrltest.Eventually(t, "a reconcile after the annotation", func(context.Context) (bool, error) { return reconcileCount(t) > count, nil })
		if after := writes.Snapshot(); len(after) != len(before) {
			t.Fatalf("no-op reconcile sent %d mutating requests: %v", len(after)-len(before), after[len(before):])
		}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "db"}, sts); err != nil {
			t.Fatal(err)
		}
		if sts.Annotations["team.example.com/owner"] != "dba" {
			t.Error("the operator removed an annotation it does not own")
		}
	})

	// From here on, each change is made to a MySQL whose children are
	// settled: its checks skip the children step until something the step
	// reads changes.
	t.Run("drift of an owned field is reverted", func(t *testing.T) {
		waitSettled(t, rec, key)
		sts := &appsv1.StatefulSet{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "db"}, sts); err != nil {
			t.Fatal(err)
		}
		patch := client.MergeFrom(sts.DeepCopy())
		sts.Spec.Template.Spec.Containers[0].Image = "evil:1"
		if err := env.Client.Patch(ctx, sts, patch, client.FieldOwner("kubectl-edit")); err != nil {
			t.Fatal(err)
		}
		ctrltest.Eventually(t, "the image to be reverted", func(ctx context.Context) (bool, error) {
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(sts), sts); err != nil {
				return false, err
			}
			return sts.Spec.Template.Spec.Containers[0].Image == "mariadb:10.11", nil
		})
		if sts.Annotations["team.example.com/owner"] != "dba" {
			t.Error("reverting drift removed an annotation the operator does not own")
		}
	})

	// The cache keeps no Service spec and no ConfigMap data (trimService,
	// trimConfigMap): drift of them is still seen, through the summary.
	t.Run("drift of a Service's target port and a ConfigMap's data is reverted", func(t *testing.T) {
		waitSettled(t, rec, key)
		cm := &corev1.ConfigMap{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "db-config"}, cm); err != nil {
			t.Fatal(err)
		}
		wantData := maps.Clone(cm.Data)
		patch := client.MergeFrom(cm.DeepCopy())
		for k := range cm.Data {
			cm.Data[k] = "evil"
		}
		if err := env.Client.Patch(ctx, cm, patch, client.FieldOwner("kubectl-edit")); err != nil {
			t.Fatal(err)
		}
		svc := &corev1.Service{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "db-headless"}, svc); err != nil {
			t.Fatal(err)
		}
		wantPort := svc.Spec.Ports[0].TargetPort
		patch = client.MergeFrom(svc.DeepCopy())
		svc.Spec.Ports[0].TargetPort = intstr.FromInt32(9999)
		if err := env.Client.Patch(ctx, svc, patch, client.FieldOwner("kubectl-edit")); err != nil {
			t.Fatal(err)
		}
		ctrltest.Eventually(t, "the ConfigMap's data and the Service's target port to be reverted", func(ctx context.Context) (bool, error) {
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(cm), cm); err != nil {
				return false, err
			}
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(svc), svc); err != nil {
				return false, err
			}
			return maps.Equal(cm.Data, wantData) && svc.Spec.Ports[0].TargetPort == wantPort, nil
		})
	})

	// A Service's ports are a list keyed by number: another manager's
	// renumbering of the operator's port would leave an apply two ports of
	// one name, which the API server rejects, unless the operator removes
	// the renumbered port first.
	t.Run("a child deleted is made again", func(t *testing.T) {
		waitSettled(t, rec, key)
		svc := &corev1.Service{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "db-replicas"}, svc); err != nil {
			t.Fatal(err)
		}
		old := svc.UID
		if err := env.Client.Delete(ctx, svc); err != nil {
			t.Fatal(err)
		}
		ctrltest.Eventually(t, "the Service to be made again", func(ctx context.Context) (bool, error) {
			err := env.Client.Get(ctx, client.ObjectKeyFromObject(svc), svc)
			return err == nil && svc.UID != old, client.IgnoreNotFound(err)
		})
	})

	t.Run("a Service port renumbered by another manager is restored", func(t *testing.T) {
		waitSettled(t, rec, key)
		svc := &corev1.Service{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "db-headless"}, svc); err != nil {
			t.Fatal(err)
		}
		want := svc.Spec.Ports[0].Port
		patch := client.MergeFrom(svc.DeepCopy())
		svc.Spec.Ports[0].Port = want + 1
		if err := env.Client.Patch(ctx, svc, patch, client.FieldOwner("kubectl-edit")); err != nil {
			t.Fatal(err)
		}
		ctrltest.Eventually(t, "the Service's one port to be restored", func(ctx context.Context) (bool, error) {
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(svc), svc); err != nil {
				return false, err
			}
			return len(svc.Spec.Ports) == 1 && svc.Spec.Ports[0].Port == want, nil
		})
		if err := env.Client.Get(ctx, key, m); err != nil {
			t.Fatal(err)
		}
		if c := ctrltest.Condition(m.Status.Conditions, databasev1.ConditionStalled); c != nil && c.Status == metav1.ConditionTrue {
			t.Errorf("the MySQL stalled: %s: %s", c.Reason, c.Message)
		}
		ctrltest.Eventually(t, "a DriftCorrected event naming the port", func(ctx context.Context) (bool, error) {
			return env.HasEvent(ctx, ns, vocabulary.EventDriftCorrected, "mysql 3307/TCP")
		})
	})

	t.Run("scale 3 to 1 prunes the PDB", func(t *testing.T) {
		if err := env.Client.Get(ctx, key, m); err != nil {
			t.Fatal(err)
		}
		env.SetReplicas(t, m, 1)
		ctrltest.Eventually(t, "the PDB to be pruned", func(ctx context.Context) (bool, error) {
			err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "db"}, &policyv1.PodDisruptionBudget{})
			return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
		})
		ctrltest.Eventually(t, "a Pruned event", func(ctx context.Context) (bool, error) {
			return env.HasEvent(ctx, ns, vocabulary.EventPruned, "PodDisruptionBudget/db pruned")
		})
		env.MarkStatefulSetReady(t, client.ObjectKey{Namespace: ns, Name: "db"})
		env.WaitKstatus(t, key, status.CurrentStatus)
	})
}

// TestPasswordSurvivesRestart restarts the manager with an empty cache and
// checks that it applies no child again and that the generated root
// password is not regenerated.
func TestPasswordSurvivesRestart(t *testing.T) {
	_, stop := startManager(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	m := ctrltest.NewMySQL(ns, "db", 1)
	if err := env.Client.Create(ctx, m); err != nil {
		t.Fatal(err)
	}
	secret := &corev1.Secret{}
	secretKey := client.ObjectKey{Namespace: ns, Name: "db-root"}
	ctrltest.Eventually(t, "the root Secret", func(ctx context.Context) (bool, error) {
		err := env.Client.Get(ctx, secretKey, secret)
		return err == nil, client.IgnoreNotFound(err)
	})
	password := string(secret.Data["password"])
	if len(password) < 32 {
		t.Fatalf("generated password has %d characters, want at least 32", len(password))
	}
	ctrltest.Eventually(t, "the first manager to write the MySQL's status", func(ctx context.Context) (bool, error) {
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(m), m)
		return m.Status.ObservedGeneration == m.Generation, err
	})
	stop()

	// The restarted manager finds every child as it applied it, through
	// the summaries its cache keeps of them: it applies nothing again.
	count := reconcileCount(t)
	writes, _ := startManager(t)
	ctrltest.Eventually(t, "a reconcile of the restarted manager", func(context.Context) (bool, error) { return reconcileCount(t) > count, nil })
	for _, w := range writes.Snapshot() {
		if strings.HasPrefix(w, http.MethodPatch) && !strings.HasSuffix(w, "/status") && !strings.Contains(w, "/events") {
			t.Errorf("the restarted manager sent %s: an unchanged child was applied again", w)
		}
	}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(m), m); err != nil {
		t.Fatal(err)
	}
	env.SetReplicas(t, m, 2)
	ctrltest.Eventually(t, "the new manager to reconcile generation 2", func(ctx context.Context) (bool, error) {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(m), m); err != nil {
			return false, err
		}
		return m.Status.ObservedGeneration == m.Generation, nil
	})
	if err := env.Client.Get(ctx, secretKey, secret); err != nil {
		t.Fatal(err)
	}
	if got := string(secret.Data["password"]); got != password {
		t.Fatal("the root password changed across a manager restart")
	}
}

// TestStalledOnMissingSecret names a Secret that does not exist: the MySQL
// stalls with a clear reason and no StatefulSet, then recovers once the
// Secret is created.
func TestStalledOnMissingSecret(t *testing.T) {
	startManager(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	m := ctrltest.NewMySQL(ns, "db", 1)
	m.Spec.RootPasswordSecretRef = &databasev1.SecretKeyReference{Name: "corp-root"}
	key := env.Create(t, m)
	env.WaitKstatus(t, key, status.FailedStatus)
	if err := env.Client.Get(ctx, key, m); err != nil {
		t.Fatal(err)
	}
	stalledCond := ctrltest.Condition(m.Status.Conditions, databasev1.ConditionStalled)
	if stalledCond == nil || stalledCond.Status != metav1.ConditionTrue || stalledCond.Reason != vocabulary.ReasonSecretNotFound || !strings.Contains(stalledCond.Message, "corp-root") {
		t.Fatalf("Stalled condition = %+v, want True/%s naming corp-root", stalledCond, vocabulary.ReasonSecretNotFound)
	}
	if m.Status.Phase != databasev1.PhaseFailed {
		t.Errorf("phase = %s, want Failed", m.Status.Phase)
	}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "db"}, &appsv1.StatefulSet{}); !apierrors.IsNotFound(err) {
		t.Errorf("a stalled MySQL got a StatefulSet: %v", err)
	}
	ctrltest.Eventually(t, "a Stalled event", func(ctx context.Context) (bool, error) {
		return env.HasEvent(ctx, ns, vocabulary.EventStalled, "corp-root")
	})

	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "corp-root", Namespace: ns}, Data: map[string][]byte{"password": []byte("s3cret-from-vault")}}
	if err := env.Client.Create(ctx, s); err != nil {
		t.Fatal(err)
	}
	env.WaitKstatus(t, key, status.InProgressStatus)
	if err := env.Client.Get(ctx, key, m); err != nil {
		t.Fatal(err)
	}
	if c := ctrltest.Condition(m.Status.Conditions, databasev1.ConditionReconciling); c == nil || c.Status != metav1.ConditionTrue {
		t.Errorf("Reconciling = %+v, want True while the StatefulSet rolls out", c)
	}
	env.MarkStatefulSetReady(t, client.ObjectKey{Namespace: ns, Name: "db"})
	env.ServePods(t, m, 0, 1)
	env.WaitKstatus(t, key, status.CurrentStatus)

	sts := &appsv1.StatefulSet{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "db"}, sts); err != nil {
		t.Fatal(err)
	}
	var ref *corev1.SecretProjection
	for _, v := range sts.Spec.Template.Spec.Volumes {
		if v.Name == "secrets" { // the volume of the passwords the init container reads
			ref = v.Projected.Sources[0].Secret
		}
	}
	if ref == nil || ref.Name != "corp-root" || ref.Items[0].Key != "password" {
		t.Errorf("the root password file comes from %+v, want corp-root/password", ref)
	}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "db-root"}, &corev1.Secret{}); !apierrors.IsNotFound(err) {
		t.Errorf("a password was generated although rootPasswordSecretRef is set: %v", err)
	}
}

// waitSettled waits until the reconciler remembers the children of key as
// settled (see settledChildren), with the view of them read at that
// fingerprint, so that what the test changes next must be seen through the
// fingerprint.
func waitSettled(t *testing.T, r *Reconciler, key client.ObjectKey) {
	t.Helper()
	ctrltest.Eventually(t, "the children to be settled", func(context.Context) (bool, error) {
		r.settled.mu.Lock()
		defer r.settled.mu.Unlock()
		return r.settled.last[key].viewed, nil
	})
}
