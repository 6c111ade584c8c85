package mysql

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/example/mysql-operator/internal/testenv"
)

// TestObserveClaims reads, against the API server and as the operator's
// service account, the claims of two pods the scheduler failed five
// minutes ago: one still pending, one bound since: the API server's
// lastPhaseTransitionTime of the bound volume is when its pod's trouble
// starts, so a claim bound late is not a pod stuck for five minutes.
func TestObserveClaims(t *testing.T) {
	ctx := context.Background()
	ns := env.NewNamespace(t)
	class := storageClass(t, "claims-"+ns, false)
	operator, err := client.New(env.OperatorConfig(t), client.Options{Scheme: testenv.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	failed := metav1.NewTime(time.Now().Add(-5 * time.Minute).Truncate(time.Second))
	pods := []corev1.Pod{unschedulablePod(t, ns, "db-0", failed), unschedulablePod(t, ns, "db-1", failed)}
	testClaim(t, ns, "data-db-0", class, "")
	volume := boundVolume(t, "pv-"+ns, class)
	testClaim(t, ns, "data-db-1", class, volume.Name)

	r := &Reconciler{Client: operator, APIReader: operator}
	obs := &observation{pods: pods}
	if err := r.observeClaims(ctx, obs); err != nil {
		t.Fatal(err)
	}
	if w, ok := obs.claims["db-0"]; !ok || !w.bound.IsZero() || w.forNode || w.classMissing {
		t.Errorf("pending claim: %+v, %t; want a claim being bound", w, ok)
	}
	w, ok := obs.claims["db-1"]
	if !ok || w.bound.Before(failed.Time) {
		t.Fatalf("bound claim: %+v, %t; want bound after %s", w, ok, failed)
	}
	judgePods(obs, w.bound.Add(time.Second), time.Minute)
	if obs.podTrouble != "" || obs.podStalled {
		t.Errorf("trouble %q (stalled %t) one second after db-1's claim was bound", obs.podTrouble, obs.podStalled)
	}
}

// unschedulablePod creates a pod the scheduler failed at since.
func unschedulablePod(t *testing.T, ns, name string, since metav1.Time) corev1.Pod {
	t.Helper()
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "mysql", Image: "mysql"}}}}
	if err := env.Client.Create(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
		Reason: corev1.PodReasonUnschedulable, Message: "pod has unbound immediate PersistentVolumeClaims", LastTransitionTime: since}}
	if err := env.Client.Status().Update(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	return *p
}

// testClaim creates a claim, bound to volume unless it is empty.
func testClaim(t *testing.T, ns, name, class, volume string) {
	t.Helper()
	c := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: ptr.To(class), VolumeName: volume,
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}}
	if err := env.Client.Create(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	if volume == "" {
		return
	}
	c.Status.Phase = corev1.ClaimBound
	if err := env.Client.Status().Update(context.Background(), c); err != nil {
		t.Fatal(err)
	}
}

// boundVolume creates a PersistentVolume and marks it Bound, as the
// volume controller does; the API server stamps the phase change.
func boundVolume(t *testing.T, name, class string) *corev1.PersistentVolume {
	t.Helper()
	pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PersistentVolumeSpec{StorageClassName: class, AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Capacity:               corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
			PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/tmp/" + name}}}}
	if err := env.Client.Create(context.Background(), pv); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), pv) })
	pv.Status.Phase = corev1.VolumeBound
	if err := env.Client.Status().Update(context.Background(), pv); err != nil {
		t.Fatal(err)
	}
	return pv
}
