package mysql

import (
	"testing"
	"time"

	"github.com/example/mysql-operator/controller/children"
	"github.com/example/mysql-operator/controller/vocabulary"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"
)

// podTransform returns the transform the manager's cache runs on the
// database pods.
func podTransform(t *testing.T) func(any) (any, error) {
	t.Helper()
	for o, by := range children.CacheOptions(labels.Everything()).ByObject {
		if _, ok := o.(*corev1.Pod); ok {
			return by.Transform
		}
	}
	t.Fatal("the cache options keep no pods")
	return nil
}

// TestStripPod shows that the cache's copy of a database pod answers every
// question the operator asks of a pod as the pod itself does, and holds
// none of what it never reads (the spec, the conditions but PodScheduled
// and Ready, the images, mounts and resources of the container statuses),
// and that a second pass changes nothing.
func TestStripPod(t *testing.T) {
	stripPod := podTransform(t)
	since := metav1.NewTime(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	status := func(name string, state corev1.ContainerState) corev1.ContainerStatus {
		return corev1.ContainerStatus{Name: name, State: state, Ready: state.Running != nil, RestartCount: 3, Started: ptr.To(state.Running != nil),
			Image: "mariadb:10.11", ImageID: "sha256:1634", ContainerID: "containerd://5b2c",
			AllocatedResources: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m")},
			Resources:          &corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("512Mi")}},
			VolumeMounts:       []corev1.VolumeMountStatus{{Name: "data", MountPath: "/var/lib/mysql"}},
			User:               &corev1.ContainerUser{Linux: &corev1.LinuxContainerUser{UID: 999, GID: 999}},
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error",
				ContainerID: "containerd://60e7"}}}
	}
	pod := func(conds []corev1.PodCondition, init, main corev1.ContainerState) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "db-0", CreationTimestamp: since, Labels: map[string]string{vocabulary.LabelRole: "primary"},
				ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubelet"}}},
			Spec: corev1.PodSpec{NodeName: "node", Containers: []corev1.Container{{Name: children.ServerContainerName, Image: "mariadb:10.11"}}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.0.0.5", PodIPs: []corev1.PodIP{{IP: "10.0.0.5"}},
				HostIP: "10.0.0.1", HostIPs: []corev1.HostIP{{IP: "10.0.0.1"}}, StartTime: &since, QOSClass: corev1.PodQOSBurstable,
				Conditions:            conds,
				InitContainerStatuses: []corev1.ContainerStatus{status("install-agent", init)},
				ContainerStatuses:     []corev1.ContainerStatus{status(children.ServerContainerName, main), status("agent", main)}},
		}
	}
	running := corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: since}}
	done := corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Completed", ContainerID: "containerd://60e7"}}
	waiting := func(reason string) corev1.ContainerState {
		return corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: "back-off"}}
	}
	ready := []corev1.PodCondition{{Type: corev1.PodInitialized, Status: corev1.ConditionTrue}, {Type: corev1.PodScheduled, Status: corev1.ConditionTrue},
		{Type: corev1.ContainersReady, Status: corev1.ConditionTrue}, {Type: corev1.PodReady, Status: corev1.ConditionTrue, LastProbeTime: since}}
	for name, p := range map[string]*corev1.Pod{
		"ready":         pod(ready, done, running),
		"crashing":      pod(nil, done, waiting("CrashLoopBackOff")),
		"init image":    pod(nil, waiting("ImagePullBackOff"), corev1.ContainerState{}),
		"unschedulable": pod([]corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable, Message: "0/1 nodes", LastTransitionTime: since}}, corev1.ContainerState{}, corev1.ContainerState{}),
	} {
		t.Run(name, func(t *testing.T) {
			out, err := stripPod(p.DeepCopy())
			if err != nil {
				t.Fatal(err)
			}
			s := out.(*corev1.Pod)
			r1, m1, t1, ok1 := podTrouble(p)
			r2, m2, t2, ok2 := podTrouble(s)
			if r1 != r2 || m1 != m2 || !t1.Equal(t2) || ok1 != ok2 {
				t.Errorf("podTrouble %q %q %v %t, want %q %q %v %t", r2, m2, t2, ok2, r1, m1, t1, ok1)
			}
			if children.PodReady(s) != children.PodReady(p) || children.ServerStarted(s) != children.ServerStarted(p) ||
				s.Status.PodIP != p.Status.PodIP || s.Labels[vocabulary.LabelRole] != "primary" || !s.CreationTimestamp.Equal(&p.CreationTimestamp) {
				t.Errorf("the stripped pod reads otherwise: %+v", s.Status)
			}
			if !equality.Semantic.DeepEqual(s.Spec, corev1.PodSpec{}) || s.ManagedFields != nil || s.Status.HostIPs != nil || s.Status.StartTime != nil {
				t.Errorf("spec, managedFields or unread status kept: %+v", s)
			}
			for _, c := range s.Status.Conditions {
				if c.Type != corev1.PodScheduled && c.Type != corev1.PodReady {
					t.Errorf("condition %s kept", c.Type)
				}
			}
			for _, c := range append(s.Status.InitContainerStatuses, s.Status.ContainerStatuses...) {
				if c.Image != "" || c.ImageID != "" || c.VolumeMounts != nil || c.Resources != nil || c.AllocatedResources != nil || c.User != nil {
					t.Errorf("container status %s keeps what the operator never reads: %+v", c.Name, c)
				}
			}
			again, _ := stripPod(s.DeepCopy())
			if !equality.Semantic.DeepEqual(again, s) {
				t.Errorf("a second pass changed the pod: %+v", again)
			}
		})
	}
}
