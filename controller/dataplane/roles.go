package dataplane

import (
	"context"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/controller/children"
	"github.com/example/mysql-operator/controller/vocabulary"
	"github.com/example/mysql-operator/topology"
)

// roleLabel is the LabelRole a pod should carry: the primary's and the
// replicas' select the Services; an errant, empty or unknown instance
// carries none, so that no Service sends it clients.
func roleLabel(i int, primary int, st topology.InstanceState) string {
	switch {
	case i == primary && st.Role == topology.RolePrimary:
		return vocabulary.RolePrimary
	case i != primary && st.Role == topology.RoleReplica:
		return vocabulary.RoleReplica
	}
	return ""
}

// labelRoles patches the role label of every pod whose label is not the
// one the plan gives it; pods already labelled cost nothing.
func (d *DataPlane) labelRoles(ctx context.Context, m *databasev1.MySQL, in *instances, plan topology.Plan, primary int) error {
	for i, pod := range in.pods {
		if pod == nil || pod.DeletionTimestamp != nil {
			continue
		}
		want := roleLabel(i, primary, plan.Instances[i])
		if pod.Labels[vocabulary.LabelRole] == want {
			continue
		}
		// The pod shares its labels with the cache's (see observePods).
		patch := client.MergeFrom(pod)
		pod = pod.DeepCopy()
		if pod.Labels == nil {
			pod.Labels = map[string]string{}
		}
		if want == "" {
			delete(pod.Labels, vocabulary.LabelRole)
		} else {
			pod.Labels[vocabulary.LabelRole] = want
		}
		if err := d.client.Patch(ctx, pod, patch, client.FieldOwner(vocabulary.FieldManager)); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("label pod %s %s: %w", pod.Name, want, err)
		}
		in.pods[i] = pod
		ctrl.LoggerFrom(ctx).Info("labelled pod", "pod", pod.Name, "role", want, "state", plan.Instances[i].Role)
	}
	return nil
}

// recordDatabase writes into rep what status says of the database: the
// primary, every instance's role and health, the action taken, and the
// errant instances.
func recordDatabase(m *databasev1.MySQL, in *instances, plan topology.Plan, primary int, rep *Report) {
	rep.Observed = true
	if primary >= 0 {
		rep.Primary = children.PodName(m, primary)
	}
	for i, st := range plan.Instances {
		s := databasev1.InstanceStatus{Name: children.PodName(m, i), Role: databasev1.InstanceRole(st.Role), Ready: st.Ready, Message: st.Reason}
		if err := in.errs[i]; err != nil {
			s.Message = strings.TrimPrefix(s.Message+": "+err.Error(), ": ")
		}
		if o := in.observed[i]; o.Reachable {
			s.GTIDExecuted = o.Executed.String()
			if o.Replication != nil && o.Replication.Lag != nil {
				lag := int64(o.Replication.Lag.Seconds())
				s.LagSeconds = &lag
			}
			if st := in.status[i]; st != nil && !st.CertificateNotAfter.IsZero() {
				s.CertificateNotAfter = &metav1.Time{Time: st.CertificateNotAfter}
			}
		}
		rep.Instances = append(rep.Instances, s)
		if st.Role == topology.RoleErrant && !discarding(plan, i) {
			rep.Errant = append(rep.Errant, s.Name)
		}
	}
	switch a := plan.Action; {
	case a.Kind != topology.ActionNone:
		// A fence waits for the grace's end (Reconcile's recheck); any
		// other action is looked at again at once.
		rep.Acted = a.Kind != topology.ActionFence
		rep.Waiting = fmt.Sprintf("%s: %s", a.Kind, a.Reason)
	case a.Reason != "":
		// What the topology waits for, such as a failover that cannot
		// happen safely yet.
		rep.Waiting = a.Reason
	}
}

// discarding says whether the plan crashes instance i to discard its
// unacknowledged transactions: then it is errant only until it restarts.
func discarding(plan topology.Plan, i int) bool {
	return plan.Action.Kind == topology.ActionDiscardUnacknowledged && plan.Action.Target == i
}
