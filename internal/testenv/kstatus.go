package testenv

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1 "github.com/example/mysql-operator/api/v1"
)

// KstatusOf computes the kstatus of an object of a kind of the API
// (MySQLDatabase, MySQLUser, MySQLGrant, ...) as kubectl, Flux and Argo CD see it.
func KstatusOf(ctx context.Context, c client.Client, kind string, key client.ObjectKey) (*status.Result, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(databasev1.GroupVersion.WithKind(kind))
	if err := c.Get(ctx, key, u); err != nil {
		return nil, err
	}
	return status.Compute(u)
}

// WaitKstatusOf waits until the kstatus of an object of kind is want, and
// fails the test with the last status seen when timeout passes.
func WaitKstatusOf(t testing.TB, c client.Client, kind string, key client.ObjectKey, want status.Status, timeout time.Duration) {
	t.Helper()
	var last *status.Result
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		res, err := KstatusOf(ctx, c, kind, key)
		if err != nil {
			return false, err
		}
		last = res
		return res.Status == want, nil
	})
	if err != nil {
		t.Fatalf("kstatus of %s %s to be %s (last: %+v): %v", kind, key, want, last, err)
	}
}
