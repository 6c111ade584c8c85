package cluster

import (
	"context"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// LocalStorageClass provisions local volumes on the real node: a directory
// under the node's directory per claim, deleted with its volume (or kept,
// with the claim, when the claim is kept).
const LocalStorageClass = "real-node-local"

// localProvisioner is the provisioner name of LocalStorageClass.
const localProvisioner = "local.mysql-operator.example.com"

// Annotations of the external-provisioner protocol.
const (
	annProvisioner   = "volume.kubernetes.io/storage-provisioner"
	annSelectedNode  = "volume.kubernetes.io/selected-node"
	annProvisionedBy = "pv.kubernetes.io/provisioned-by"
)

// startStorage creates LocalStorageClass, the cluster's default when it
// has no KWOK nodes, and runs its provisioner until the cluster stops.
// kube-controller-manager's host-path provisioner would make root-owned
// 0750 directories a non-root database cannot write, and host-path
// volumes take no fsGroup; local volumes do.
func (c *Cluster) startStorage(ctx context.Context) error {
	sc := &storagev1.StorageClass{
		ObjectMeta:        metav1.ObjectMeta{Name: LocalStorageClass},
		Provisioner:       localProvisioner,
		ReclaimPolicy:     ptr.To(corev1.PersistentVolumeReclaimDelete),
		VolumeBindingMode: ptr.To(storagev1.VolumeBindingWaitForFirstConsumer),
	}
	if c.opts.Nodes == 0 {
		sc.Annotations = map[string]string{"storageclass.kubernetes.io/is-default-class": "true"}
	}
	if err := c.Client.Create(ctx, sc); client.IgnoreAlreadyExists(err) != nil {
		return err
	}
	pctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	c.stopStorage = func() { cancel(); <-done }
	go func() {
		defer close(done)
		t := time.NewTicker(300 * time.Millisecond)
		defer t.Stop()
		for {
			c.provision(pctx)
			select {
			case <-pctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return nil
}

// provision makes a volume for every claim of LocalStorageClass whose pod
// is scheduled, and deletes the released volumes of the Delete policy.
func (c *Cluster) provision(ctx context.Context) {
	claims := &corev1.PersistentVolumeClaimList{}
	if err := c.Client.List(ctx, claims); err != nil {
		return
	}
	for i := range claims.Items {
		pvc := &claims.Items[i]
		if pvc.Annotations[annProvisioner] == localProvisioner && pvc.Spec.VolumeName == "" &&
			pvc.Annotations[annSelectedNode] != "" && pvc.DeletionTimestamp == nil {
			_ = c.createLocalVolume(ctx, pvc)
		}
	}
	volumes := &corev1.PersistentVolumeList{}
	if err := c.Client.List(ctx, volumes); err != nil {
		return
	}
	for i := range volumes.Items {
		pv := &volumes.Items[i]
		if pv.Annotations[annProvisionedBy] == localProvisioner && pv.Status.Phase == corev1.VolumeReleased &&
			pv.Spec.PersistentVolumeReclaimPolicy == corev1.PersistentVolumeReclaimDelete {
			if err := os.RemoveAll(pv.Spec.Local.Path); err == nil {
				_ = c.Client.Delete(ctx, pv)
			}
		}
	}
}

// createLocalVolume makes the directory and the volume of a claim, bound
// to it and to its node.
func (c *Cluster) createLocalVolume(ctx context.Context, pvc *corev1.PersistentVolumeClaim) error {
	name := "pvc-" + string(pvc.UID)
	path := c.nodeDir("volumes", name)
	if err := os.MkdirAll(path, 0o755); err != nil {
		return err
	}
	size := pvc.Spec.Resources.Requests[corev1.ResourceStorage]
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{annProvisionedBy: localProvisioner}},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: ptr.Deref(&size, resource.MustParse("1Gi"))},
			AccessModes:                   pvc.Spec.AccessModes,
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimDelete,
			StorageClassName:              LocalStorageClass,
			VolumeMode:                    ptr.To(corev1.PersistentVolumeFilesystem),
			ClaimRef:                      &corev1.ObjectReference{Kind: "PersistentVolumeClaim", Namespace: pvc.Namespace, Name: pvc.Name, UID: pvc.UID},
			PersistentVolumeSource:        corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: path}},
			NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "kubernetes.io/hostname", Operator: corev1.NodeSelectorOpIn,
					Values: []string{pvc.Annotations[annSelectedNode]}}},
			}}}},
		},
	}
	return client.IgnoreAlreadyExists(c.Client.Create(ctx, pv))
}

// volumeDir returns the directory of a local volume, for tests that look
// at a volume's files.
func (c *Cluster) volumeDir(pv string) string { return filepath.Join(c.nodeDir("volumes"), pv) }
