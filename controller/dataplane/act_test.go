package dataplane

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/dbop"
	"github.com/example/mysql-operator/topology"
)

// TestActWithoutTarget takes actions that name no target (-1) on
// instances that cannot be reached: an error naming the instance, not a
// panic (a SetReadOnly after a half-done switchover once indexed -1).
func TestActWithoutTarget(t *testing.T) {
	d := &DataPlane{demoted: newDemotions()}
	m := &databasev1.MySQL{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "db"}}
	in := &instances{db: make([]*dbop.Instance, 3), observed: make([]topology.Instance, 3)}
	plan := topology.Plan{Primary: 0, Action: topology.Action{Kind: topology.ActionSetReadOnly, Target: -1, From: -1, Instances: []int{1, 1, 2}}}
	_, err := d.act(context.Background(), m, in, plan, nil)
	if err == nil || !strings.Contains(err.Error(), "instance 1 is not reachable") || strings.Count(err.Error(), "instance 1") != 1 {
		t.Errorf("SetReadOnly on unreachable instances [1 1 2]: %v; want instance 1 named once", err)
	}
}
