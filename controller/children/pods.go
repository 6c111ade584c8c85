package children

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// What the operator reads of its database pods, besides their names,
// labels and address: the manager's cache keeps of a pod only what these
// and the MySQL reconciler's trouble checks read (see stripPod).

// PodReady says whether the pod's Ready condition is True.
func PodReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// ServerStarted says whether the pod's server container runs.
func ServerStarted(p *corev1.Pod) bool {
	for _, c := range p.Status.ContainerStatuses {
		if c.Name == ServerContainerName {
			return c.State.Running != nil
		}
	}
	return false
}

// maxErrorLine bounds the error line LastErrorLine returns, in bytes.
const maxErrorLine = 400

// LastErrorLine picks, from the end of a container's log that the kubelet
// kept as its termination message (FallbackToLogsOnError), the line that
// says why it failed: the server's last "[ERROR]" line but its closing
// "Aborting", else the last line of the agent's own error ("agent init:
// ..."); "" when there is none (a server killed from outside says nothing
// of it, and a note that names an error would mislead).
func LastErrorLine(message string) string {
	lines := strings.Split(strings.TrimSpace(message), "\n")
	pick := func(ok func(string) bool) string {
		for i := len(lines) - 1; i >= 0; i-- {
			if l := strings.TrimSpace(lines[i]); l != "" && ok(l) {
				if len(l) > maxErrorLine {
					l = l[:maxErrorLine] + "..."
				}
				return l
			}
		}
		return ""
	}
	if l := pick(func(l string) bool { return strings.Contains(l, "[ERROR]") && !strings.HasSuffix(l, "Aborting") }); l != "" {
		return l
	}
	return pick(func(l string) bool { return strings.HasPrefix(l, "agent ") })
}
