package e2e

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/internal/testenv"
)

// TestStorageGrowth grows storageSize of a MySQL on KWOK nodes, whose
// volumes can grow (the real node's local volumes cannot): its data claims
// grow, its StatefulSet is created again with the larger claim template,
// and the running pods are adopted, not restarted. No server runs on KWOK
// nodes, so the MySQL itself never gets Ready: the test waits for its
// StatefulSet instead.
func TestStorageGrowth(t *testing.T) {
	ctx := context.Background()
	ns := testenv.NewNamespace(t, c.Client)
	m := &databasev1.MySQL{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: ns}, Spec: databasev1.MySQLSpec{Replicas: 2, Version: "8.4"}}
	if err := c.Client.Create(ctx, m); err != nil {
		t.Fatal(err)
	}
	waitStatefulSetCurrent(t, key(ns, "db"))
	eventually(t, "2 running pods", func(ctx context.Context) (bool, error) {
		n, err := runningPods(ctx, ns, "db")
		return n == 2, err
	})
	podUIDs := func(ctx context.Context) (map[string]types.UID, error) {
		pods := &corev1.PodList{}
		if err := c.Client.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels{"app.kubernetes.io/instance": "db"}); err != nil {
			return nil, err
		}
		uids := map[string]types.UID{}
		for _, p := range pods.Items {
			uids[p.Name] = p.UID
		}
		return uids, nil
	}
	before, err := podUIDs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	old := &appsv1.StatefulSet{}
	if err := c.Client.Get(ctx, key(ns, "db"), old); err != nil {
		t.Fatal(err)
	}

	if err := c.Client.Patch(ctx, m, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"storageSize":"20Gi"}}`))); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a StatefulSet with a 20Gi claim template", func(ctx context.Context) (bool, error) {
		sts := &appsv1.StatefulSet{}
		if err := c.Client.Get(ctx, key(ns, "db"), sts); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		for _, tpl := range sts.Spec.VolumeClaimTemplates {
			q := tpl.Spec.Resources.Requests[corev1.ResourceStorage]
			return sts.UID != old.UID && q.String() == "20Gi", nil
		}
		return false, nil
	})
	waitStatefulSetCurrent(t, key(ns, "db"))
	for _, name := range []string{"data-db-0", "data-db-1"} {
		pvc := &corev1.PersistentVolumeClaim{}
		if err := c.Client.Get(ctx, key(ns, name), pvc); err != nil {
			t.Fatal(err)
		}
		if q := pvc.Spec.Resources.Requests[corev1.ResourceStorage]; q.String() != "20Gi" {
			t.Errorf("%s requests %s, want 20Gi", name, q.String())
		}
	}
	after, err := podUIDs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for name, uid := range before {
		if after[name] != uid {
			t.Errorf("pod %s was replaced (uid %s, was %s): growing volumes must not restart pods", name, after[name], uid)
		}
	}
}

// waitStatefulSetCurrent waits until the StatefulSet k's kstatus is Current.
func waitStatefulSetCurrent(t *testing.T, k client.ObjectKey) {
	t.Helper()
	eventually(t, "StatefulSet "+k.String()+" to be Current", func(ctx context.Context) (bool, error) {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(appsv1.SchemeGroupVersion.WithKind("StatefulSet"))
		if err := c.Client.Get(ctx, k, u); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		res, err := status.Compute(u)
		return err == nil && res.Status == status.CurrentStatus, err
	})
}
