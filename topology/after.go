package topology

import "slices"

// After returns the plan as it stands once its action succeeded with
// primary as the cluster's primary (a failover chooses its candidate only
// when it acts): a switchover or a failover makes the new primary's state
// Primary and the instances it repointed (a switchover's old primary
// among them) Replica, not ready until observed. Every other action, and
// a failed one, leaves the plan as decided. The reconciler labels the pods
// and writes status from it, so that a Service follows a new primary in
// the check that promoted it, not one check later.
func (p Plan) After(primary int) Plan {
	a := p.Action
	if (a.Kind != ActionSwitchover && a.Kind != ActionFailover) || primary < 0 || primary >= len(p.Instances) {
		return p
	}
	repointed := slices.Clone(a.Instances)
	if a.Kind == ActionSwitchover {
		repointed = append(repointed, a.From)
	}
	out := p
	out.Primary = primary
	out.Instances = slices.Clone(p.Instances)
	for _, i := range repointed {
		if i != primary && i >= 0 && i < len(out.Instances) {
			out.Instances[i].Role, out.Instances[i].Ready, out.Instances[i].Reason = RoleReplica, false, "repointed at the new primary"
		}
	}
	out.Instances[primary].Role, out.Instances[primary].Ready, out.Instances[primary].Reason = RolePrimary, true, ""
	return out
}
