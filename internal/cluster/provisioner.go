package cluster

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/example/mysql-operator/internal/testenv"
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

// provisionWorkers is how many volumes the provisioner makes or deletes at
// once, as an external provisioner's worker threads.
const provisionWorkers = 8

// volumeKind is how the provisioner serves one provisioner name: what
// backs a claim's volume, and how to remove it once released.
type volumeKind struct {
	class string
	// source makes the backing store of pvc's volume and says where the
	// volume may be used.
	source func(pvc *corev1.PersistentVolumeClaim) (corev1.PersistentVolumeSource, *corev1.VolumeNodeAffinity, error)
	// release removes the backing store of a released volume.
	release func(pv *corev1.PersistentVolume) error
}

// localVolumes serves LocalStorageClass: a directory on the real node.
func (c *Cluster) localVolumes() volumeKind {
	return volumeKind{
		class: LocalStorageClass,
		source: func(pvc *corev1.PersistentVolumeClaim) (corev1.PersistentVolumeSource, *corev1.VolumeNodeAffinity, error) {
			path := c.nodeDir("volumes", "pvc-"+string(pvc.UID))
			affinity := &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "kubernetes.io/hostname", Operator: corev1.NodeSelectorOpIn,
					Values: []string{pvc.Annotations[annSelectedNode]}}},
			}}}}
			return corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: path}}, affinity, os.MkdirAll(path, 0o755)
		},
		release: func(pv *corev1.PersistentVolume) error { return os.RemoveAll(pv.Spec.Local.Path) },
	}
}

// kwokVolumes serves kwokStorageClass: a host path KWOK's nodes never
// mount, as KWOK's own volume stages make.
func kwokVolumes() volumeKind {
	return volumeKind{
		class: kwokStorageClass().Name,
		source: func(pvc *corev1.PersistentVolumeClaim) (corev1.PersistentVolumeSource, *corev1.VolumeNodeAffinity, error) {
			return corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{
				Path: "/tmp/kwok-local-path-provisioner/pvc-" + string(pvc.UID), Type: ptr.To(corev1.HostPathDirectoryOrCreate)}}, nil, nil
		},
		release: func(*corev1.PersistentVolume) error { return nil },
	}
}

// startStorage creates the cluster's classes and runs their provisioner:
// LocalStorageClass when it has the real node, the default class when it
// has no KWOK nodes; kwokStorageClass, the default, when it has KWOK
// nodes. kube-controller-manager's host-path provisioner would make
// root-owned 0750 directories a non-root database cannot write, and
// host-path volumes take no fsGroup; local volumes do.
func (c *Cluster) startStorage(ctx context.Context) error {
	var classes []*storagev1.StorageClass
	if c.opts.RealNode {
		sc := &storagev1.StorageClass{
			ObjectMeta:        metav1.ObjectMeta{Name: LocalStorageClass},
			Provisioner:       localProvisioner,
			ReclaimPolicy:     ptr.To(corev1.PersistentVolumeReclaimDelete),
			VolumeBindingMode: ptr.To(storagev1.VolumeBindingWaitForFirstConsumer),
		}
		if c.opts.Nodes == 0 {
			sc.Annotations = map[string]string{"storageclass.kubernetes.io/is-default-class": "true"}
		}
		classes = append(classes, sc)
	}
	if c.opts.Nodes > 0 {
		classes = append(classes, kwokStorageClass())
	}
	for _, sc := range classes {
		if err := c.Client.Create(ctx, sc); client.IgnoreAlreadyExists(err) != nil {
			return err
		}
	}
	return c.startProvisioner(ctx)
}

// startProvisioner runs, until the cluster stops, the provisioner of the
// cluster's classes: the real node's when it has one, KWOK's when it has
// KWOK nodes. It works as a CSI external provisioner does: it makes a
// volume for a claim once kube-scheduler has picked the claim's node
// (WaitForFirstConsumer), pre-bound to the claim, and leaves the binding
// to kube-controller-manager; it deletes the released volumes of the
// Delete policy. It reads claims and volumes from a watch, and so loads
// the API server with its writes only.
func (c *Cluster) startProvisioner(ctx context.Context) error {
	kinds := map[string]volumeKind{}
	if c.opts.RealNode {
		kinds[localProvisioner] = c.localVolumes()
	}
	if c.opts.Nodes > 0 {
		kinds[kwokStorageClass().Provisioner] = kwokVolumes()
	}
	ca, err := cache.New(c.Config, cache.Options{Scheme: testenv.Scheme})
	if err != nil {
		return err
	}
	for _, o := range []client.Object{&corev1.PersistentVolumeClaim{}, &corev1.PersistentVolume{}} {
		if _, err := ca.GetInformer(ctx, o); err != nil {
			return err
		}
	}
	pctx, cancel := context.WithCancel(context.Background())
	go func() { _ = ca.Start(pctx) }()
	if !ca.WaitForCacheSync(ctx) {
		cancel()
		return errors.New("the volume provisioner's cache did not sync")
	}
	done := make(chan struct{})
	c.stopStorage = func() { cancel(); <-done }
	p := &provisioner{c: c.Client, cache: ca, kinds: kinds, done: map[types.UID]bool{}}
	go func() {
		defer close(done)
		t := time.NewTicker(300 * time.Millisecond)
		defer t.Stop()
		for {
			p.sync(pctx)
			select {
			case <-pctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return nil
}

// provisioner makes and deletes the volumes of the kinds it serves.
type provisioner struct {
	c     client.Client
	cache cache.Cache
	kinds map[string]volumeKind
	// done holds the claims whose volume this provisioner made and the
	// volumes it deleted, so that it does not write twice while its cache
	// catches up.
	done map[types.UID]bool
}

// sync makes a volume for every claim of a served kind whose node is
// picked, and deletes the released volumes of the Delete policy, a few at
// once.
func (p *provisioner) sync(ctx context.Context) {
	var jobs []job
	claims := &corev1.PersistentVolumeClaimList{}
	// The lists share the cache's objects, which sync only reads: a
	// copy of every claim and volume three times a second would cost a
	// quarter of a core at 2000 claims.
	if err := p.cache.List(ctx, claims, client.UnsafeDisableDeepCopy); err != nil {
		return
	}
	for i := range claims.Items {
		pvc := &claims.Items[i]
		kind, ok := p.kinds[pvc.Annotations[annProvisioner]]
		if ok && pvc.Spec.VolumeName == "" && pvc.Annotations[annSelectedNode] != "" && pvc.DeletionTimestamp == nil && !p.done[pvc.UID] {
			p.done[pvc.UID] = true
			jobs = append(jobs, job{pvc.UID, func() error { return p.create(ctx, kind, pvc) }})
		}
	}
	volumes := &corev1.PersistentVolumeList{}
	if err := p.cache.List(ctx, volumes, client.UnsafeDisableDeepCopy); err != nil {
		return
	}
	for i := range volumes.Items {
		pv := &volumes.Items[i]
		kind, ok := p.kinds[pv.Annotations[annProvisionedBy]]
		if ok && pv.Status.Phase == corev1.VolumeReleased && pv.Spec.PersistentVolumeReclaimPolicy == corev1.PersistentVolumeReclaimDelete && !p.done[pv.UID] {
			p.done[pv.UID] = true
			jobs = append(jobs, job{pv.UID, func() error {
				if err := kind.release(pv); err != nil {
					return err
				}
				return client.IgnoreNotFound(p.c.Delete(ctx, pv))
			}})
		}
	}
	failed := make([]bool, len(jobs))
	var g errgroup.Group
	g.SetLimit(provisionWorkers)
	for i, j := range jobs {
		g.Go(func() error { failed[i] = j.do() != nil; return nil })
	}
	_ = g.Wait() // the jobs report failures in failed
	for i, j := range jobs {
		if failed[i] {
			delete(p.done, j.uid) // tried again at the next sync
		}
	}
}

// job is one volume to make or delete, by the UID of its claim or volume.
type job struct {
	uid types.UID
	do  func() error
}

// create makes the volume of a claim, bound to it.
func (p *provisioner) create(ctx context.Context, kind volumeKind, pvc *corev1.PersistentVolumeClaim) error {
	source, affinity, err := kind.source(pvc)
	if err != nil {
		return err
	}
	size := pvc.Spec.Resources.Requests[corev1.ResourceStorage]
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "pvc-" + string(pvc.UID), Annotations: map[string]string{annProvisionedBy: pvc.Annotations[annProvisioner]}},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: ptr.Deref(&size, resource.MustParse("1Gi"))},
			AccessModes:                   pvc.Spec.AccessModes,
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimDelete,
			StorageClassName:              kind.class,
			VolumeMode:                    ptr.To(corev1.PersistentVolumeFilesystem),
			ClaimRef:                      &corev1.ObjectReference{Kind: "PersistentVolumeClaim", Namespace: pvc.Namespace, Name: pvc.Name, UID: pvc.UID},
			PersistentVolumeSource:        source,
			NodeAffinity:                  affinity,
		},
	}
	return client.IgnoreAlreadyExists(p.c.Create(ctx, pv))
}

// volumeDir returns the directory of a local volume, for tests that look
// at a volume's files.
func (c *Cluster) volumeDir(pv string) string { return filepath.Join(c.nodeDir("volumes"), pv) }
