package mysql

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/controller/children"
	"github.com/example/mysql-operator/controller/outcome"
	"github.com/example/mysql-operator/controller/vocabulary"
)

// DefaultStallAfter is how long a pod may stay unschedulable, unable to
// pull its image or failing to start before its MySQL is Stalled.
const DefaultStallAfter = 2 * time.Minute

// troubleGrace is how long a pod may be unable to run before its MySQL
// says so: a new pod is unschedulable for a moment, or its container
// waits, in a roll-out's normal course, which is not news worth a status
// write. A claim being bound has a longer grace (see storageTrouble).
const troubleGrace = 10 * time.Second

// waitingReasons classify a container's waiting reason.
var waitingReasons = map[string]string{
	"ErrImagePull": vocabulary.ReasonImagePullFailed, "ImagePullBackOff": vocabulary.ReasonImagePullFailed,
	"InvalidImageName": vocabulary.ReasonImagePullFailed, "ErrImageNeverPull": vocabulary.ReasonImagePullFailed,
	"CreateContainerConfigError": vocabulary.ReasonContainerFailing, "CreateContainerError": vocabulary.ReasonContainerFailing,
	"RunContainerError": vocabulary.ReasonContainerFailing, "CrashLoopBackOff": vocabulary.ReasonContainerFailing,
}

// unschedulable returns the condition by which the scheduler says it
// found no node for a pod, or nil.
func unschedulable(p *corev1.Pod) *corev1.PodCondition {
	for i, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

// podTrouble says whether a pod cannot run, why (a condition reason and a
// message naming the pod), and since when.
func podTrouble(p *corev1.Pod) (reason, message string, since time.Time, ok bool) {
	if c := unschedulable(p); c != nil {
		since := c.LastTransitionTime.Time
		if since.IsZero() {
			since = p.CreationTimestamp.Time
		}
		return vocabulary.ReasonPodUnschedulable, fmt.Sprintf("pod %s cannot be scheduled: %s", p.Name, c.Message), since, true
	}
	for _, cs := range slices.Concat(p.Status.InitContainerStatuses, p.Status.ContainerStatuses) {
		w := cs.State.Waiting
		if w == nil || waitingReasons[w.Reason] == "" {
			continue
		}
		msg := fmt.Sprintf("pod %s, container %s: %s", p.Name, cs.Name, w.Reason)
		if w.Message != "" {
			msg += ": " + w.Message
		}
		// In trouble since the pod was made, or since the container last
		// exited: a server that crashed once after running for days is
		// not stuck, and one that crash-loops stalls once its back-off has
		// grown past the limit.
		since := p.CreationTimestamp.Time
		if t := cs.LastTerminationState.Terminated; t != nil {
			msg += fmt.Sprintf(" (last exit code %d, %s)", t.ExitCode, strings.TrimSpace(t.Reason))
			if line := children.LastErrorLine(t.Message); line != "" {
				msg += ": " + line
			}
			since = later(since, t.FinishedAt.Time)
		}
		return waitingReasons[w.Reason], msg, since, true
	}
	return "", "", time.Time{}, false
}

// indexPodInstance indexes the cached database pods by their MySQL (the
// instance label): listing a MySQL's pods reads its own few, where a label
// selector alone would match every pod of the namespace, each reconcile.
const indexPodInstance = ".metadata.labels[" + vocabulary.LabelInstance + "]"

// podInstance is the indexPodInstance of a pod.
func podInstance(o client.Object) []string {
	if name, ok := o.GetLabels()[vocabulary.LabelInstance]; ok {
		return []string{name}
	}
	return nil
}

// observePods reads the MySQL's pods from the cache into obs, with the
// unbound claims of those that cannot be scheduled, and judges their
// trouble (see judgePods).
func (r *Reconciler) observePods(ctx context.Context, m *databasev1.MySQL, obs *observation) error {
	// Read only: the items share their labels, conditions and container
	// statuses with the cache's own pods (labelRoles patches a copy).
	pods := &corev1.PodList{}
	if err := r.Client.List(ctx, pods, client.InNamespace(m.Namespace), client.MatchingFields{indexPodInstance: m.Name},
		client.MatchingLabels(children.SelectorLabels(m)), client.UnsafeDisableDeepCopy); err != nil {
		return fmt.Errorf("list pods: %w", err)
	}
	obs.pods = pods.Items
	slices.SortFunc(obs.pods, func(a, b corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
	if err := r.observeClaims(ctx, obs); err != nil {
		return err
	}
	judgePods(obs, time.Now(), r.StallAfter)
	return nil
}

// judgePods records in obs the first pod that has been unable to run for
// troubleGrace: the MySQL says which and why, and is Stalled once the pod
// has been so for stallAfter, a time after which the cause (a missing
// image, a node that does not exist, a config the server refuses) needs a
// spec change. A pod whose claim is being bound is progress, recorded as
// obs.storageWait once the claim has waited stallAfter, for at least
// StorageStallAfter (see storageTrouble). It asks to look again when a
// grace or a limit ends.
func judgePods(obs *observation, now time.Time, stallAfter time.Duration) {
	for i := range obs.pods {
		t, ok := troubleOf(&obs.pods[i], obs.claims, stallAfter)
		if !ok {
			continue
		}
		age := now.Sub(t.since)
		if wait := min(cmp.Or(t.grace, troubleGrace), t.stallAfter) - age; wait > 0 {
			obs.recheck = outcome.Soonest(obs.recheck, wait)
			continue
		}
		if t.wait != "" && age < t.stallAfter {
			obs.storageWait = cmp.Or(obs.storageWait, t.wait)
			obs.recheck = outcome.Soonest(obs.recheck, t.stallAfter-age)
			continue
		}
		obs.podTrouble, obs.podStallReason = t.message, t.reason
		if wait := t.stallAfter - age; wait > 0 {
			obs.recheck = outcome.Soonest(obs.recheck, wait)
		} else {
			obs.podStalled = true
		}
		return
	}
}

// troubleOf returns the trouble of a pod, if it has any: an unschedulable
// pod whose data claim is unbound (and not merely waiting for the pod's
// node) has the claim's trouble; one whose claim was bound after the
// scheduler last failed it is unschedulable since the binding.
func troubleOf(p *corev1.Pod, claims map[string]claimWait, stallAfter time.Duration) (trouble, bool) {
	reason, msg, since, ok := podTrouble(p)
	if !ok {
		return trouble{}, false
	}
	w, claimed := claims[p.Name]
	switch {
	case !claimed || reason != vocabulary.ReasonPodUnschedulable:
	case !w.bound.IsZero():
		since = later(since, w.bound)
	case !w.forNode:
		return storageTrouble(p.Name, w, stallAfter), true
	}
	return trouble{reason: reason, message: msg, since: since, stallAfter: stallAfter}, true
}

// later returns the later of two times.
func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
