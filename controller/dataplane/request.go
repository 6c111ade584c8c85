package dataplane

import (
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/controller/children"
	"github.com/example/mysql-operator/controller/vocabulary"
)

// requestTTL is how long a switchover asked for with
// AnnotationSwitchover may wait (for its target to be a healthy replica)
// before it is refused: a request is one-shot, never acted on long after
// whoever asked has stopped waiting.
const requestTTL = 10 * time.Minute

// switchoverRequest is a switchover asked for with AnnotationSwitchover
// and not answered yet.
type switchoverRequest struct {
	// value is the annotation's value.
	value string
	// target is the index of the instance asked for.
	target int
	// refused says why it is not acted on; empty when it is.
	refused string
}

// pendingSwitchover returns the switchover asked for on m at now that
// status.switchover has not answered; ok is false when there is none.
func pendingSwitchover(m *databasev1.MySQL, now time.Time) (req switchoverRequest, ok bool) {
	v := m.Annotations[vocabulary.AnnotationSwitchover]
	if v == "" || (m.Status.Switchover != nil && m.Status.Switchover.Request == v) {
		return req, false
	}
	req = switchoverRequest{value: v, target: -1}
	pod, at, found := strings.Cut(v, "@")
	asked, err := time.Parse(time.RFC3339, at)
	req.target = children.PodIndex(m, pod)
	switch {
	case !found || err != nil:
		req.refused = fmt.Sprintf("%s %q: want <pod>@<RFC 3339 time>", vocabulary.AnnotationSwitchover, v)
	case m.Spec.PreferredPrimary != nil:
		req.refused = fmt.Sprintf("spec.preferredPrimary is %d: the primary it names is the one Git asks for; change it there",
			*m.Spec.PreferredPrimary)
	case req.target < 0 || req.target >= int(m.Spec.Replicas):
		req.refused = fmt.Sprintf("%s is not an instance of %s (%d replicas)", pod, m.Name, m.Spec.Replicas)
	case now.Sub(asked) > requestTTL:
		req.refused = fmt.Sprintf("asked at %s, more than %s ago, and %s never became a healthy replica to switch to",
			asked.UTC().Format(time.RFC3339), requestTTL, pod)
	}
	return req, true
}

// answer is status.switchover for req once the primary is primary (-1
// for none) at now; nil while it is still to be acted on.
func (req switchoverRequest) answer(m *databasev1.MySQL, primary int, now time.Time) *databasev1.SwitchoverStatus {
	st := &databasev1.SwitchoverStatus{Request: req.value, Time: metav1.NewTime(now)}
	switch {
	case req.refused != "":
		st.Result, st.Message = databasev1.SwitchoverRefused, req.refused
	case primary == req.target:
		st.Result, st.Message = databasev1.SwitchoverDone, children.PodName(m, primary)+" is the primary"
	default:
		return nil
	}
	return st
}
