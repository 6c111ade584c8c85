package mysql

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/controller/children"
	"github.com/example/mysql-operator/controller/vocabulary"
	"github.com/example/mysql-operator/internal/ctrltest"
)

// storageClass creates a cluster-scoped StorageClass for one test.
func storageClass(t *testing.T, name string, expandable bool) string {
	t.Helper()
	sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Provisioner: "example.com/test", AllowVolumeExpansion: ptr.To(expandable)}
	if err := env.Client.Create(context.Background(), sc); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), sc) })
	return name
}

// boundClaims does what the StatefulSet controller and a provisioner would:
// a bound data claim for each replica.
func boundClaims(t *testing.T, ns, sts, class string, replicas int) {
	t.Helper()
	ctx := context.Background()
	for i := range replicas {
		pvc := &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: children.DataVolume + "-" + sts + "-" + string(rune('0'+i))},
			Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				StorageClassName: &class,
				VolumeName:       "pv-" + ns + "-" + string(rune('0'+i)),
				Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
			},
		}
		if err := env.Client.Create(ctx, pvc); err != nil {
			t.Fatal(err)
		}
		pvc.Status = corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound, Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}
		if err := env.Client.Status().Update(ctx, pvc); err != nil {
			t.Fatal(err)
		}
	}
}

// currentOnClass makes, in a new namespace, a Current MySQL "db" of
// replicas with 1Gi volumes of a new StorageClass that allows expansion or
// not, and bound claims, and returns it, its key and its StatefulSet.
func currentOnClass(t *testing.T, expandable bool, replicas int32) (*databasev1.MySQL, client.ObjectKey, *appsv1.StatefulSet) {
	t.Helper()
	ns := env.NewNamespace(t)
	class := storageClass(t, fmt.Sprintf("expandable-%t-%s", expandable, ns), expandable)
	m := ctrltest.NewMySQL(ns, "db", replicas)
	m.Spec.StorageSize, m.Spec.StorageClassName = "1Gi", &class
	key := env.Create(t, m)
	env.MarkStatefulSetReady(t, key)
	if replicas > 1 {
		env.MarkPDBReady(t, key)
	}
	env.ServePods(t, m, 0, int(replicas))
	env.WaitKstatus(t, key, status.CurrentStatus)
	boundClaims(t, ns, "db", class, int(replicas))
	sts := &appsv1.StatefulSet{}
	if err := env.Client.Get(context.Background(), key, sts); err != nil {
		t.Fatal(err)
	}
	return m, key, sts
}

func growStorage(t *testing.T, m *databasev1.MySQL, size string) {
	t.Helper()
	if err := env.Client.Patch(context.Background(), m, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"storageSize":"`+size+`"}}`))); err != nil {
		t.Fatal(err)
	}
}

func claimRequest(t *testing.T, key client.ObjectKey) string {
	t.Helper()
	pvc := &corev1.PersistentVolumeClaim{}
	if err := env.Client.Get(context.Background(), key, pvc); err != nil {
		t.Fatal(err)
	}
	q := pvc.Spec.Resources.Requests[corev1.ResourceStorage]
	return q.String()
}

// TestStorageGrowth grows storageSize: every data claim grows, the
// StatefulSet is deleted orphaning its pods and created again with the new
// claim template, and the MySQL comes back Current.
func TestStorageGrowth(t *testing.T) {
	startManager(t)
	ctx := context.Background()
	m, key, old := currentOnClass(t, true, 2)
	ns := m.Namespace

	growStorage(t, m, "3Gi")
	ctrltest.Eventually(t, "the StatefulSet to be deleted, orphaning its pods", func(ctx context.Context) (bool, error) {
		sts := &appsv1.StatefulSet{}
		if err := env.Client.Get(ctx, key, sts); err != nil {
			return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
		}
		return sts.UID == old.UID && sts.DeletionTimestamp != nil, nil
	})
	for i := range 2 {
		if got := claimRequest(t, client.ObjectKey{Namespace: ns, Name: "data-db-" + string(rune('0'+i))}); got != "3Gi" {
			t.Errorf("claim %d requests %s, want 3Gi", i, got)
		}
	}
	env.WaitKstatus(t, key, status.InProgressStatus)
	// envtest runs no garbage collector: finish the orphaning deletion.
	sts := &appsv1.StatefulSet{}
	if err := env.Client.Get(ctx, key, sts); err == nil {
		sts.Finalizers = nil
		if err := env.Client.Update(ctx, sts); client.IgnoreNotFound(err) != nil {
			t.Fatal(err)
		}
	}
	ctrltest.Eventually(t, "a new StatefulSet with the new claim template", func(ctx context.Context) (bool, error) {
		if err := env.Client.Get(ctx, key, sts); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		size, _ := claimSize(sts)
		return sts.UID != old.UID && size.String() == "3Gi", nil
	})
	env.MarkStatefulSetReady(t, key)
	env.WaitKstatus(t, key, status.CurrentStatus)
	ctrltest.Eventually(t, "a VolumesExpanded event", func(ctx context.Context) (bool, error) {
		return env.HasEvent(ctx, ns, vocabulary.EventVolumesExpanded, "from 1Gi to 3Gi")
	})
}

// TestStorageGrowthRejected grows storageSize on a StorageClass that does
// not allow expansion: the MySQL stalls, saying why, once, and its
// StatefulSet stays as it was; allowing expansion on the class recovers it
// without touching the MySQL.
func TestStorageGrowthRejected(t *testing.T) {
	saved := expansionRetry
	expansionRetry = time.Second
	t.Cleanup(func() { expansionRetry = saved })
	startManager(t)
	ctx := context.Background()
	m, key, old := currentOnClass(t, false, 1)
	ns, class := m.Namespace, *m.Spec.StorageClassName

	growStorage(t, m, "2Gi")
	env.WaitKstatus(t, key, status.FailedStatus)
	if err := env.Client.Get(ctx, key, m); err != nil {
		t.Fatal(err)
	}
	if c := ctrltest.Condition(m.Status.Conditions, databasev1.ConditionStalled); c == nil || c.Reason != vocabulary.ReasonVolumeExpansionRejected {
		t.Errorf("Stalled = %+v, want reason %s", c, vocabulary.ReasonVolumeExpansionRejected)
	}
	sts := &appsv1.StatefulSet{}
	if err := env.Client.Get(ctx, key, sts); err != nil {
		t.Fatal(err)
	}
	if size, _ := claimSize(sts); sts.UID != old.UID || sts.DeletionTimestamp != nil || size.String() != "1Gi" {
		t.Errorf("StatefulSet changed: uid %s (was %s), deleting %v, claim %s", sts.UID, old.UID, sts.DeletionTimestamp != nil, size.String())
	}
	if got := claimRequest(t, client.ObjectKey{Namespace: ns, Name: "data-db-0"}); got != "1Gi" {
		t.Errorf("claim requests %s, want 1Gi", got)
	}

	// Retried, the stall is not reported again.
	count := reconcileCount(t)
	ctrltest.Eventually(t, "two retries", func(context.Context) (bool, error) { return reconcileCount(t) >= count+2, nil })
	stalls := env.CountEvents(t, ns, vocabulary.EventStalled)
	if stalls != 1 {
		t.Errorf("%d Stalled events, want 1 for one stall however often retried", stalls)
	}

	sc := &storagev1.StorageClass{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: class}, sc); err != nil {
		t.Fatal(err)
	}
	sc.AllowVolumeExpansion = ptr.To(true)
	if err := env.Client.Update(ctx, sc); err != nil {
		t.Fatal(err)
	}
	ctrltest.Eventually(t, "the claim to grow once the class allows it", func(context.Context) (bool, error) {
		return claimRequest(t, client.ObjectKey{Namespace: ns, Name: "data-db-0"}) == "2Gi", nil
	})
	env.WaitKstatus(t, key, status.InProgressStatus)
}
