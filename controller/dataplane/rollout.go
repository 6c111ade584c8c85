package dataplane

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/controller/children"
	"github.com/example/mysql-operator/controller/vocabulary"
	"github.com/example/mysql-operator/topology"
)

// The StatefulSet's update strategy is OnDelete: the operator rolls the
// pods itself, so that the primary goes last and hands over first. It
// deletes the pods of an old revision one at a time, replicas first,
// highest ordinal first, each once every instance is ready; when only the
// primary is left it asks Decide for a switchover to an updated replica,
// then deletes the old primary, which comes back as a replica. A single
// instance has no one to hand over to: its pod is deleted as it is.

// revisions is what a roll-out needs of the StatefulSet and the pods.
type revisions struct {
	// update is the StatefulSet's update revision; "" before it has one.
	update string
	// outdated says, by index, which pods run an older revision.
	outdated []bool
}

// readRevisions reads the update revision from the cached StatefulSet
// and compares every pod's.
func (d *DataPlane) readRevisions(ctx context.Context, m *databasev1.MySQL, in *instances) (revisions, error) {
	rev := revisions{outdated: make([]bool, len(in.pods))}
	sts := &appsv1.StatefulSet{}
	err := d.client.Get(ctx, types.NamespacedName{Namespace: m.Namespace, Name: children.StatefulSetName(m)}, sts, client.UnsafeDisableDeepCopy)
	if err != nil {
		return rev, client.IgnoreNotFound(err)
	}
	rev.update = sts.Status.UpdateRevision
	for i, p := range in.pods {
		rev.outdated[i] = rev.update != "" && p != nil && p.Labels[appsv1.ControllerRevisionHashLabelKey] != rev.update
	}
	return rev, nil
}

// handOver is the instance the primary should move to for a roll-out: the
// lowest updated one, once the primary is the only outdated instance; -1
// when no hand-over is due.
func (rev revisions) handOver(primary int) int {
	if primary < 0 || primary >= len(rev.outdated) || !rev.outdated[primary] || len(rev.outdated) < 2 {
		return -1
	}
	for i, old := range rev.outdated {
		if old && i != primary {
			return -1
		}
	}
	for i, old := range rev.outdated {
		if !old {
			return i
		}
	}
	return -1
}

// next is the pod to delete next, -1 for none: an outdated replica, the
// highest first, or the primary when it is alone; only while every
// instance is ready and no action is under way.
func (rev revisions) next(plan topology.Plan, primary int) int {
	if plan.Action.Kind != topology.ActionNone {
		return -1
	}
	for _, st := range plan.Instances {
		if !st.Ready {
			return -1
		}
	}
	for i := len(rev.outdated) - 1; i >= 0; i-- {
		if rev.outdated[i] && (i != primary || len(rev.outdated) == 1) {
			return i
		}
	}
	return -1
}

// rollOut deletes the next pod of an old revision, if any is due, and
// says whether it did.
func (d *DataPlane) rollOut(ctx context.Context, m *databasev1.MySQL, in *instances, rev revisions, plan topology.Plan, primary int) (bool, error) {
	i := rev.next(plan, primary)
	if i < 0 {
		return false, nil
	}
	pod := in.pods[i]
	uid := pod.UID
	if err := d.client.Delete(ctx, pod, client.Preconditions{UID: &uid}); client.IgnoreNotFound(err) != nil {
		return false, fmt.Errorf("delete pod %s of an old revision: %w", pod.Name, err)
	}
	ctrl.LoggerFrom(ctx).Info("rolled pod", "pod", pod.Name, "revision", rev.update)
	vocabulary.Event(d.recorder, m, vocabulary.EventTopology, "Rolling out revision %s: restarted pod %s", rev.update, pod.Name)
	return true, nil
}
