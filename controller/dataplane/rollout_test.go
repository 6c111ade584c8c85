package dataplane

import (
	"testing"

	"github.com/example/mysql-operator/topology"
)

// TestRollOutOrder checks the order the operator rolls pods in: replicas
// first, highest ordinal first, one at a time while all are ready; the
// primary hands over before it goes, unless it is alone.
func TestRollOutOrder(t *testing.T) {
	ready := func(n int) topology.Plan {
		p := topology.Plan{Action: topology.Action{Kind: topology.ActionNone}}
		for i := range n {
			p.Instances = append(p.Instances, topology.InstanceState{Index: i, Ready: true})
		}
		return p
	}
	notReady := ready(3)
	notReady.Instances[2].Ready = false
	busy := ready(3)
	busy.Action.Kind = topology.ActionConfigureReplicas
	tests := []struct {
		name               string
		outdated           []bool
		plan               topology.Plan
		primary            int
		wantNext, wantHand int
	}{
		{"nothing to roll", []bool{false, false, false}, ready(3), 0, -1, -1},
		{"highest replica first", []bool{true, true, true}, ready(3), 0, 2, -1},
		{"then the next", []bool{true, true, false}, ready(3), 0, 1, -1},
		{"primary last: hand over first", []bool{true, false, false}, ready(3), 0, -1, 1},
		{"primary not at 0", []bool{true, true, false}, ready(3), 2, 1, -1},
		{"wait for a pod not ready", []bool{true, true, true}, notReady, 0, -1, -1},
		{"wait for an action", []bool{true, true, true}, busy, 0, -1, -1},
		{"a single instance goes as it is", []bool{true}, ready(1), 0, 0, -1},
	}
	for _, tt := range tests {
		rev := revisions{update: "r2", outdated: tt.outdated}
		if got := rev.next(tt.plan, tt.primary); got != tt.wantNext {
			t.Errorf("%s: next = %d, want %d", tt.name, got, tt.wantNext)
		}
		if got := rev.handOver(tt.primary); got != tt.wantHand {
			t.Errorf("%s: handOver = %d, want %d", tt.name, got, tt.wantHand)
		}
	}
}
