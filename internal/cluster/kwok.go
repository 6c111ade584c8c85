package cluster

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"k8s.io/apimachinery/pkg/util/wait"
)

// startKwok runs KWOK with the node and pod "fast" stages of its own
// module, read from the Go module cache where `go install` put them. Not
// its volume stages: they play one claim at a time, making its volume at
// once whatever the class's binding mode and again at each change of the
// claim until it is bound, and at 2000 MySQLs created at once hundreds of
// pods waited minutes for their claims. The harness's provisioner
// (startStorage) makes KWOK's volumes instead.
func (c *Cluster) startKwok(ctx context.Context) error {
	stages, err := kwokStageDir()
	if err != nil {
		return err
	}
	args := []string{"--kubeconfig=" + c.Kubeconfig,
		"--manage-nodes-with-annotation-selector=" + NodeAnnotation + "=fake",
		"--server-address=127.0.0.1:" + strconv.Itoa(c.ports["kwok"]),
		"--node-lease-duration-seconds=40",
		// Fake pods get loopback addresses: the operator connects to every
		// pod's address, and a fake one must fail at once on this machine,
		// never send a packet towards another host.
		"--cidr=127.2.0.0/16", "--node-ip=127.1.0.1"}
	for _, f := range []string{"node/fast/node-initialize.yaml", "node/heartbeat-with-lease/node-heartbeat-with-lease.yaml",
		"pod/fast/pod-ready.yaml", "pod/fast/pod-complete.yaml", "pod/fast/pod-delete.yaml"} {
		args = append(args, "--config="+filepath.Join(stages, f))
	}
	return c.startProcess("kwok", "kwok", args...)
}

// kwokStorageClass is the default StorageClass of a cluster with KWOK
// nodes, served by the harness's provisioner: KWOK's (volume/fast/
// storage-class.yaml), but as most clouds' default classes are, volumes
// can grow and are bound when the first pod is scheduled. With KWOK's
// Immediate binding the scheduler tries a pod again and again until its
// claim is bound, and how often depends on how many pods wait at once.
func kwokStorageClass() *storagev1.StorageClass {
	return &storagev1.StorageClass{
		ObjectMeta: metav1.ObjectMeta{Name: "kwok-volume",
			Annotations: map[string]string{"storageclass.kubernetes.io/is-default-class": "true"}},
		Provisioner:          "kwok.x-k8s.io/volume",
		ReclaimPolicy:        ptr.To(corev1.PersistentVolumeReclaimDelete),
		VolumeBindingMode:    ptr.To(storagev1.VolumeBindingWaitForFirstConsumer),
		AllowVolumeExpansion: ptr.To(true),
	}
}

// kwokStageDir finds kustomize/stage of the kwok module in the module cache.
func kwokStageDir() (string, error) {
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMODCACHE: %w", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "sigs.k8s.io", "kwok@"+KwokVersion, "kustomize", "stage")
	if _, err := os.Stat(dir); err != nil {
		return "", fmt.Errorf("kwok stages not in the module cache (run `make control-plane`): %w", err)
	}
	return dir, nil
}

// KwokVersion is the kwok module whose binary and stages the cluster uses;
// the Makefile pins the same version.
const KwokVersion = "v0.8.0"

// createNodes creates the fake nodes KWOK manages and waits until they
// are Ready and the default ServiceAccount exists.
func (c *Cluster) createNodes(ctx context.Context) error {
	for i := range c.opts.Nodes {
		name := fmt.Sprintf("kwok-node-%d", i)
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Annotations: map[string]string{NodeAnnotation: "fake"},
			Labels:      map[string]string{"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64", "type": "kwok"},
		}, Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{}}}
		if err := c.Client.Create(ctx, node); client.IgnoreAlreadyExists(err) != nil {
			return err
		}
	}
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		nodes := &corev1.NodeList{}
		if err := c.Client.List(ctx, nodes); err != nil {
			return false, nil
		}
		ready := 0
		for _, n := range nodes.Items {
			for _, cond := range n.Status.Conditions {
				if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
					ready++
				}
			}
		}
		// The default ServiceAccount is what pods of the default namespace need.
		err := c.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "default"}, &corev1.ServiceAccount{})
		return ready == c.opts.Nodes && err == nil, client.IgnoreNotFound(err)
	})
}
