package controller

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1 "github.com/example/mysql-operator/api/v1"
)

// DefaultStallAfter is how long a pod may stay unschedulable, unable to
// pull its image or failing to start before its MySQL is Stalled.
const DefaultStallAfter = 2 * time.Minute

// troubleGrace is how long a pod may be unable to run before its MySQL
// says so: a new pod is unschedulable for a moment while its claim binds,
// which is a roll-out's normal course, not news worth a status write.
const troubleGrace = 10 * time.Second

// Condition reasons of a pod that cannot run.
const (
	// ReasonPodUnschedulable: no node can take a pod.
	ReasonPodUnschedulable = "PodUnschedulable"
	// ReasonImagePullFailed: a pod's image cannot be pulled.
	ReasonImagePullFailed = "ImagePullFailed"
	// ReasonContainerFailing: a container cannot be created or keeps crashing.
	ReasonContainerFailing = "ContainerFailing"
)

// waitingReasons classify a container's waiting reason.
var waitingReasons = map[string]string{
	"ErrImagePull": ReasonImagePullFailed, "ImagePullBackOff": ReasonImagePullFailed,
	"InvalidImageName": ReasonImagePullFailed, "ErrImageNeverPull": ReasonImagePullFailed,
	"CreateContainerConfigError": ReasonContainerFailing, "CreateContainerError": ReasonContainerFailing,
	"RunContainerError": ReasonContainerFailing, "CrashLoopBackOff": ReasonContainerFailing,
}

// podTrouble says whether a pod cannot run, why (a condition reason and a
// message naming the pod), and since when.
func podTrouble(p *corev1.Pod) (reason, message string, since time.Time, ok bool) {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			since := c.LastTransitionTime.Time
			if since.IsZero() {
				since = p.CreationTimestamp.Time
			}
			return ReasonPodUnschedulable, fmt.Sprintf("pod %s cannot be scheduled: %s", p.Name, c.Message), since, true
		}
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
		if t := cs.LastTerminationState.Terminated; t != nil {
			msg += fmt.Sprintf(" (last exit code %d, %s)", t.ExitCode, strings.TrimSpace(t.Reason))
		}
		return waitingReasons[w.Reason], msg, p.CreationTimestamp.Time, true
	}
	return "", "", time.Time{}, false
}

// observePods reads the MySQL's pods from the cache into obs, and judges
// their trouble (see judgePods).
func (r *Reconciler) observePods(ctx context.Context, m *databasev1.MySQL, obs *observation) error {
	pods := &corev1.PodList{}
	if err := r.Client.List(ctx, pods, client.InNamespace(m.Namespace), client.MatchingLabels(SelectorLabels(m))); err != nil {
		return fmt.Errorf("list pods: %w", err)
	}
	obs.pods = pods.Items
	slices.SortFunc(obs.pods, func(a, b corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
	judgePods(obs, time.Now(), r.StallAfter)
	return nil
}

// judgePods records in obs the first pod that has been unable to run for
// troubleGrace: the MySQL says which and why, and is Stalled once the pod
// has been so for stallAfter, a time after which the cause (a missing
// image, a node that does not exist, a config the server refuses) needs a
// spec change. It asks to look again when the pod's grace or stallAfter
// ends.
func judgePods(obs *observation, now time.Time, stallAfter time.Duration) {
	for i := range obs.pods {
		reason, msg, since, ok := podTrouble(&obs.pods[i])
		if !ok {
			continue
		}
		if wait := min(troubleGrace, stallAfter) - now.Sub(since); wait > 0 {
			obs.recheck = soonest(obs.recheck, wait)
			continue
		}
		obs.podTrouble, obs.podStallReason = msg, reason
		if wait := stallAfter - now.Sub(since); wait > 0 {
			obs.recheck = soonest(obs.recheck, wait)
		} else {
			obs.podStalled = true
		}
		return
	}
}
