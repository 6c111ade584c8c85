package topology

import (
	"reflect"
	"testing"
)

func TestPlanAfter(t *testing.T) {
	states := func(roles ...Role) []InstanceState {
		out := make([]InstanceState, len(roles))
		for i, r := range roles {
			out[i] = InstanceState{Index: i, Role: r, Ready: r == RolePrimary || r == RoleReplica}
		}
		return out
	}
	repointed := func(s InstanceState) InstanceState {
		s.Role, s.Ready, s.Reason = RoleReplica, false, "repointed at the new primary"
		return s
	}
	promoted := func(s InstanceState) InstanceState {
		s.Role, s.Ready, s.Reason = RolePrimary, true, ""
		return s
	}
	three := states(RolePrimary, RoleReplica, RoleReplica)
	lost := states(RoleUnknown, RoleReplica, RoleReplica)
	withErrant := states(RoleUnknown, RoleReplica, RoleReplica, RoleErrant)
	cases := []struct {
		name    string
		plan    Plan
		primary int
		want    []InstanceState
	}{
		{"switchover 0 -> 1", Plan{Primary: 1, Instances: three, Action: Action{Kind: ActionSwitchover, Target: 1, From: 0, Instances: []int{2}}},
			1, []InstanceState{repointed(three[0]), promoted(three[1]), repointed(three[2])}},
		{"failover to the chosen 2", Plan{Primary: 1, Instances: lost, Action: Action{Kind: ActionFailover, Target: 1, From: 0, Instances: []int{1, 2}}},
			2, []InstanceState{lost[0], repointed(lost[1]), promoted(lost[2])}},
		{"failover leaves the errant and the lost as they were", Plan{Primary: 1, Instances: withErrant, Action: Action{Kind: ActionFailover, Target: 1, From: 0, Instances: []int{1, 2}}},
			1, []InstanceState{withErrant[0], promoted(withErrant[1]), repointed(withErrant[2]), withErrant[3]}},
		{"other actions change nothing", Plan{Primary: 0, Instances: three, Action: Action{Kind: ActionConfigureReplicas, Target: 0, From: -1, Instances: []int{1, 2}}},
			0, three},
		{"a failed failover (no primary) changes nothing", Plan{Primary: 1, Instances: lost, Action: Action{Kind: ActionFailover, Target: 1, From: 0, Instances: []int{1, 2}}},
			-1, lost},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := append([]InstanceState(nil), tc.plan.Instances...)
			got := tc.plan.After(tc.primary)
			if !reflect.DeepEqual(got.Instances, tc.want) {
				t.Errorf("instances after:\n got %+v\nwant %+v", got.Instances, tc.want)
			}
			if !reflect.DeepEqual(tc.plan.Instances, before) {
				t.Error("After changed the plan it was given")
			}
			if tc.primary >= 0 && got.Primary != tc.primary && tc.plan.Action.Kind == ActionFailover {
				t.Errorf("primary after: %d, want %d", got.Primary, tc.primary)
			}
		})
	}
}
