package children

import corev1 "k8s.io/api/core/v1"

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
