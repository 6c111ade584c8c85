package mysql

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/applyset"
	"github.com/example/mysql-operator/controller/vocabulary"
)

// releaseServicePorts mends a Service whose port another manager
// renumbered, and says whether it changed anything. A Service's ports are
// a list keyed by port and protocol: when another manager changes the
// number of the operator's port, server-side apply gives the renumbered
// port to that manager, the operator's own is gone, and applying it again
// adds it beside the renumbered one, which the API server rejects (two
// ports of one name). So the operator removes, from the live Service read
// uncached, each port that has the name of one of its own and another
// number or protocol. The patch first tests each port it removes, so that
// a Service changed meanwhile is left as it is and fails the patch.
func (r *Reconciler) releaseServicePorts(ctx context.Context, obj *databasev1.MySQL, m applyset.Member) (bool, error) {
	desired, ok := m.Desired().(*corev1ac.ServiceApplyConfiguration)
	if !ok || desired.Spec == nil {
		return false, nil
	}
	live := &corev1.Service{}
	switch err := r.APIReader.Get(ctx, m.Key(), live); {
	case apierrors.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("get Service %s: %w", m.Name(), err)
	}
	ops, removed := foreignPortOps(live.Spec.Ports, desired.Spec.Ports)
	if len(ops) == 0 {
		return false, nil
	}
	patch, err := json.Marshal(ops)
	if err != nil {
		return false, err
	}
	if err := r.Client.Patch(ctx, live, client.RawPatch(types.JSONPatchType, patch), client.FieldOwner(vocabulary.FieldManager)); err != nil {
		// Not wrapped: a failed test (the Service changed since the read)
		// is answered as invalid, and must bring a retry, not a stall.
		return false, fmt.Errorf("remove renumbered ports of Service %s: %v", m.Name(), err)
	}
	ctrl.LoggerFrom(ctx).Info("removed renumbered Service ports", "child", m.Name(), "ports", removed)
	vocabulary.Event(r.Recorder, obj, vocabulary.EventDriftCorrected, "Service/%s: removed port %v, renumbered by another manager", m.Name(), removed)
	return true, nil
}

// jsonPatchOp is one operation of a JSON patch (RFC 6902).
type jsonPatchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value,omitempty"`
}

// foreignPortOps returns the JSON patch that removes from live each port
// named as one of want but with another port number or protocol, last
// first so that the indices hold, each after tests of its name and
// number; and the names and numbers of those ports.
func foreignPortOps(live []corev1.ServicePort, want []corev1ac.ServicePortApplyConfiguration) ([]jsonPatchOp, []string) {
	wanted := make(map[string]corev1ac.ServicePortApplyConfiguration, len(want))
	for _, p := range want {
		if p.Name != nil {
			wanted[*p.Name] = p
		}
	}
	var ops []jsonPatchOp
	var removed []string
	for i := len(live) - 1; i >= 0; i-- {
		p := live[i]
		w, ok := wanted[p.Name]
		if !ok || (w.Port != nil && *w.Port == p.Port && protocolOf(w.Protocol) == protocolOf(&p.Protocol)) {
			continue
		}
		path := "/spec/ports/" + strconv.Itoa(i)
		ops = append(ops,
			jsonPatchOp{Op: "test", Path: path + "/name", Value: p.Name},
			jsonPatchOp{Op: "test", Path: path + "/port", Value: p.Port},
			jsonPatchOp{Op: "remove", Path: path})
		removed = append(removed, fmt.Sprintf("%s %d/%s", p.Name, p.Port, protocolOf(&p.Protocol)))
	}
	return ops, removed
}

// protocolOf is a port's protocol, TCP when unset as the API server
// defaults it.
func protocolOf(p *corev1.Protocol) corev1.Protocol {
	if p == nil || *p == "" {
		return corev1.ProtocolTCP
	}
	return *p
}

// applyMended answers an apply of m that the API server rejected as
// invalid: when another manager's change of the live object is what made
// it invalid and the operator can undo that change, it does and applies m
// again; otherwise it returns the rejection as it was.
func (r *Reconciler) applyMended(ctx context.Context, obj *databasev1.MySQL, a applyset.Applier, m applyset.Member, rejected error) (applyset.Result, error) {
	mended, err := r.releaseServicePorts(ctx, obj, m)
	if err != nil {
		return "", err
	}
	if !mended {
		return "", rejected
	}
	return a.Apply(ctx, m)
}
