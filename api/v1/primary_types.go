package v1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// PrimaryChange is a change of primary the operator made.
type PrimaryChange struct {
	// from is the pod that was primary.
	// +optional
	From string `json:"from,omitempty"`
	// to is the pod made primary.
	To string `json:"to"`
	// time is when it was made primary.
	Time metav1.Time `json:"time"`
}

// SwitchoverResult is what became of a switchover asked for.
type SwitchoverResult string

// The results of a switchover asked for.
const (
	// SwitchoverDone: the pod asked for is the primary.
	SwitchoverDone SwitchoverResult = "Done"
	// SwitchoverRefused: the request was not acted on; the message says why.
	SwitchoverRefused SwitchoverResult = "Refused"
)

// SwitchoverStatus is the answer to the last switchover asked for with
// the annotation database.example.com/switchover ("<pod>@<RFC 3339
// time>", as `kubectl mysql switchover` writes it). The request is
// one-shot: answered once, it is not acted on again, so a primary moved
// this way stays where it is while spec.preferredPrimary is unset; with
// spec.preferredPrimary set (Git owns it) a request is refused.
type SwitchoverStatus struct {
	// request is the annotation's value answered.
	Request string `json:"request"`
	// result is Done or Refused.
	Result SwitchoverResult `json:"result"`
	// message says why it was refused, or which pod is the primary.
	// +optional
	Message string `json:"message,omitempty"`
	// time is when it was answered.
	Time metav1.Time `json:"time"`
}
