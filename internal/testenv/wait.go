package testenv

import (
	"context"
	"testing"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1 "github.com/example/mysql-operator/api/v1"
)

// Eventually polls cond every 50ms until it returns true, and fails the test
// when it returns an error or timeout passes.
func Eventually(t testing.TB, timeout time.Duration, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, timeout, true, cond); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// Kstatus computes the kstatus of a MySQL as kubectl, Flux and Argo CD see it.
func Kstatus(ctx context.Context, c client.Client, key client.ObjectKey) (*status.Result, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(databasev1.GroupVersion.WithKind(databasev1.MySQLKind))
	if err := c.Get(ctx, key, u); err != nil {
		return nil, err
	}
	return status.Compute(u)
}

// WaitKstatus waits until the kstatus of a MySQL is want, and fails the test
// with the last status seen when timeout passes.
func WaitKstatus(t testing.TB, c client.Client, key client.ObjectKey, want status.Status, timeout time.Duration) {
	t.Helper()
	var last *status.Result
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		res, err := Kstatus(ctx, c, key)
		if err != nil {
			return false, err
		}
		last = res
		return res.Status == want, nil
	})
	if err != nil {
		t.Fatalf("kstatus of MySQL %s to be %s (last: %+v): %v", key, want, last, err)
	}
}

// NewNamespace creates a namespace with a random name for one test, and
// deletes it when the test passed (a failed test's objects are kept).
func NewNamespace(t testing.TB, c client.Client) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "test-" + rand.String(6)}}
	if err := c.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			return // what a failed test leaves is kept, to be looked at
		}
		if err := c.Delete(context.Background(), ns); client.IgnoreNotFound(err) != nil {
			t.Errorf("delete namespace %s: %v", ns.Name, err)
		}
	})
	return ns.Name
}

// ServiceAccountToken creates the ServiceAccount ns/name and returns a token
// of it from the TokenRequest API.
func ServiceAccountToken(t testing.TB, c client.Client, ns, name string) string {
	t.Helper()
	ctx := context.Background()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
	if err := c.Create(ctx, sa); err != nil {
		t.Fatal(err)
	}
	tr := &authnv1.TokenRequest{}
	if err := c.SubResource("token").Create(ctx, sa, tr); err != nil {
		t.Fatal(err)
	}
	return tr.Status.Token
}
