package backup

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/example/mysql-operator/agent"
	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/backup"
	"github.com/example/mysql-operator/controller/children"
	"github.com/example/mysql-operator/controller/vocabulary"
)

// Timing of a backup.
const (
	// DefaultSourceWait is how long a backup waits for its MySQL and an
	// instance to take it on before it fails.
	DefaultSourceWait = 10 * time.Minute
	// pollInterval is how often a running backup's agent is asked.
	pollInterval = 5 * time.Second
	// waitRetry is how soon a waiting backup is tried again.
	waitRetry = 10 * time.Second
	// agentTimeout bounds one request to an agent.
	agentTimeout = 10 * time.Second
)

// Reconciler takes the backup each MySQLBackup asks for, through the agent
// of an instance of its MySQL, and deletes its files when it is deleted.
type Reconciler struct {
	client.Client
	// APIReader reads the storage's Secrets, which the cache keeps without values.
	APIReader client.Reader
	// Recorder records the backups' events.
	Recorder events.EventRecorder
	// SourceWait is how long a backup may wait to start; DefaultSourceWait when 0.
	SourceWait time.Duration
	// AgentImage is the image the scratch pods of verification copy the agent from.
	AgentImage string
}

// +kubebuilder:rbac:groups=database.example.com,resources=mysqlbackups,verbs=get;list;watch;create;delete;patch
// +kubebuilder:rbac:groups=database.example.com,resources=mysqlbackups/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=database.example.com,resources=mysqlbackups/finalizers,verbs=update
// +kubebuilder:rbac:groups=database.example.com,resources=mysqls,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;create;patch;delete

// Reconcile moves one backup a step: start it on an instance, follow it
// to its end, or delete its files once it is deleted.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	b := &databasev1.MySQLBackup{}
	if err := r.Get(ctx, req.NamespacedName, b); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !b.DeletionTimestamp.IsZero() {
		return r.finalize(ctx, b)
	}
	if b.Status.Phase == databasev1.BackupFailed {
		return ctrl.Result{}, nil
	}
	if !controllerutil.ContainsFinalizer(b, vocabulary.FinalizerBackupFiles) {
		patch := client.MergeFrom(b.DeepCopy())
		controllerutil.AddFinalizer(b, vocabulary.FinalizerBackupFiles)
		if err := r.Patch(ctx, b, patch); err != nil {
			return ctrl.Result{}, fmt.Errorf("add the finalizer of MySQLBackup %s: %w", b.Name, err)
		}
	}
	before := b.DeepCopy()
	res, err := r.advance(ctx, b)
	if !equality.Semantic.DeepEqual(before.Status, b.Status) {
		if perr := r.Status().Patch(ctx, b, client.MergeFrom(before)); perr != nil {
			return ctrl.Result{}, fmt.Errorf("patch MySQLBackup status %s: %w", b.Name, perr)
		}
	}
	return res, err
}

// advance takes the backup's next step and records it in b's status.
func (r *Reconciler) advance(ctx context.Context, b *databasev1.MySQLBackup) (ctrl.Result, error) {
	m := &databasev1.MySQL{}
	err := r.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: b.Spec.MySQLRef.Name}, m)
	switch {
	case apierrors.IsNotFound(err) && b.Status.Phase == databasev1.BackupComplete:
		return ctrl.Result{}, nil // nothing to verify with
	case apierrors.IsNotFound(err):
		return r.wait(b, vocabulary.ReasonMySQLNotFound, "MySQL %s does not exist in namespace %s", b.Spec.MySQLRef.Name, b.Namespace)
	case err != nil:
		return ctrl.Result{}, fmt.Errorf("get MySQL %s: %w", b.Spec.MySQLRef.Name, err)
	case b.Status.Phase == databasev1.BackupComplete:
		if wantsVerify(b, m) {
			return r.verify(ctx, b, m)
		}
		return ctrl.Result{}, nil
	case m.Spec.Backup == nil:
		markFailed(b, vocabulary.ReasonNoBackupPolicy, "MySQL %s has no spec.backup: it names no storage to back up to", m.Name)
		return ctrl.Result{}, nil
	case b.Status.Phase == databasev1.BackupRunning:
		return r.follow(ctx, b, m)
	}
	return r.start(ctx, b, m)
}

// wait keeps b Pending for reason, and fails it once it waited SourceWait.
func (r *Reconciler) wait(b *databasev1.MySQLBackup, reason, format string, args ...any) (ctrl.Result, error) {
	limit := r.SourceWait
	if limit == 0 {
		limit = DefaultSourceWait
	}
	if time.Since(b.CreationTimestamp.Time) > limit {
		markFailed(b, vocabulary.ReasonNoSource, "not started in %s: "+format, append([]any{limit}, args...)...)
		vocabulary.Event(r.Recorder, b, vocabulary.EventBackupFailed, "%s", b.Status.Message)
		return ctrl.Result{}, nil
	}
	markWaiting(b, databasev1.BackupPending, vocabulary.ReasonBackupPending, format, args...)
	return ctrl.Result{RequeueAfter: waitRetry}, nil
}

// start asks the agent of the source instance to take the backup.
func (r *Reconciler) start(ctx context.Context, b *databasev1.MySQLBackup, m *databasev1.MySQL) (ctrl.Result, error) {
	src, why := pickSource(m)
	if src == "" {
		return r.wait(b, vocabulary.ReasonBackupPending, "%s", why)
	}
	a, err := r.agentOf(ctx, m, src)
	if err == nil {
		err = a.StartBackup(ctx, agent.BackupRequest{Name: b.Name})
	}
	if err != nil {
		return r.wait(b, vocabulary.ReasonBackupPending, "%s cannot start the backup yet: %v", src, err)
	}
	storage := m.Spec.Backup.Storage
	b.Status.Instance, b.Status.StartTime, b.Status.Storage = src, ptrTime(time.Now()), &storage
	b.Status.Location = "s3://" + storage.S3.Bucket + "/" + joinKey(storage.S3.Prefix, backup.BackupsDir+b.Name+"/")
	markWaiting(b, databasev1.BackupRunning, vocabulary.ReasonBackupRunning, "%s streams the backup to %s", src, b.Status.Location)
	vocabulary.Event(r.Recorder, b, vocabulary.EventBackupStarted, "%s streams the backup to %s", src, b.Status.Location)
	return ctrl.Result{RequeueAfter: pollInterval}, nil
}

// follow asks the source's agent how the backup goes. An agent that
// restarted knows none: it is asked again, and picks up from the storage
// (a complete backup's manifest is returned as it is).
func (r *Reconciler) follow(ctx context.Context, b *databasev1.MySQLBackup, m *databasev1.MySQL) (ctrl.Result, error) {
	a, err := r.agentOf(ctx, m, b.Status.Instance)
	if err != nil {
		// The instance is gone: start again, on another if need be.
		lost := b.Status.Instance
		b.Status.Instance, b.Status.StartTime = "", nil
		return r.wait(b, vocabulary.ReasonBackupPending, "the instance %s was lost during the backup (%v): starting again", lost, err)
	}
	st, found, err := a.BackupStatus(ctx, b.Name)
	switch {
	case err != nil:
		markWaiting(b, databasev1.BackupRunning, vocabulary.ReasonBackupRunning, "the agent of %s does not answer: %v", b.Status.Instance, err)
		return ctrl.Result{RequeueAfter: waitRetry}, nil
	case !found:
		if err := a.StartBackup(ctx, agent.BackupRequest{Name: b.Name}); err != nil {
			return ctrl.Result{RequeueAfter: waitRetry}, nil
		}
		return ctrl.Result{RequeueAfter: pollInterval}, nil
	case st.Phase == agent.BackupComplete && st.Manifest != nil:
		markComplete(b, st.Manifest)
		vocabulary.Event(r.Recorder, b, vocabulary.EventBackupComplete, "%s", b.Status.Message)
		return ctrl.Result{}, nil
	case st.Phase == agent.BackupFailed:
		markFailed(b, vocabulary.ReasonBackupFailed, "on %s: %s", b.Status.Instance, st.Error)
		vocabulary.Event(r.Recorder, b, vocabulary.EventBackupFailed, "%s", b.Status.Message)
		return ctrl.Result{}, nil
	}
	return ctrl.Result{RequeueAfter: pollInterval}, nil
}

// agentOf is the client of the agent of pod, from the cache's pod and the
// operator's Secrets: over mutual TLS while the pod serves TLS.
func (r *Reconciler) agentOf(ctx context.Context, m *databasev1.MySQL, podName string) (*agent.Client, error) {
	pod := &corev1.Pod{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: m.Namespace, Name: podName}, pod); err != nil {
		return nil, fmt.Errorf("get pod %s: %w", podName, err)
	}
	if pod.Status.PodIP == "" {
		return nil, fmt.Errorf("pod %s has no address", podName)
	}
	secret := &corev1.Secret{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: m.Namespace, Name: children.OperatorSecretName(m)}, secret); err != nil {
		return nil, fmt.Errorf("get the operator's Secret of %s: %w", m.Name, err)
	}
	tlsSecret := &corev1.Secret{}
	if children.ServesTLS(pod) {
		if err := r.Get(ctx, client.ObjectKey{Namespace: m.Namespace, Name: children.TLSSecretName(m)}, tlsSecret); err != nil {
			return nil, fmt.Errorf("get the certificate Secret of %s: %w", m.Name, err)
		}
	}
	addr, cfg, err := children.AgentEndpoint(m, pod, tlsSecret.Data)
	if err != nil {
		return nil, err
	}
	return agent.NewClient(addr, string(secret.Data[children.AgentPasswordKey]), cfg), nil
}

// finalize deletes the files of a deleted backup, then lets it go. A
// backup that never started has none.
func (r *Reconciler) finalize(ctx context.Context, b *databasev1.MySQLBackup) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(b, vocabulary.FinalizerBackupFiles) {
		return ctrl.Result{}, nil
	}
	if s := b.Status.Storage; s != nil {
		store, err := openStore(ctx, r.APIReader, b.Namespace, *s)
		if apierrors.IsNotFound(err) {
			// The credentials are gone (a namespace being deleted goes
			// with its Secrets): the files stay, and the backup goes.
			vocabulary.Event(r.Recorder, b, vocabulary.EventFilesKept, "the files at %s are kept: %v", b.Status.Location, err)
			return r.release(ctx, b)
		}
		if err == nil {
			err = deleteFiles(ctx, store, b.Name)
		}
		if err != nil {
			before := b.DeepCopy()
			markWaiting(b, b.Status.Phase, vocabulary.ReasonDeletingFiles, "deleting the files at %s: %v", b.Status.Location, err)
			if perr := r.Status().Patch(ctx, b, client.MergeFrom(before)); perr != nil {
				return ctrl.Result{}, perr
			}
			return ctrl.Result{RequeueAfter: waitRetry}, nil
		}
		vocabulary.Event(r.Recorder, b, vocabulary.EventFilesDeleted, "deleted the files at %s", b.Status.Location)
	}
	return r.release(ctx, b)
}

// release removes the finalizer: the backup goes.
func (r *Reconciler) release(ctx context.Context, b *databasev1.MySQLBackup) (ctrl.Result, error) {
	patch := client.MergeFrom(b.DeepCopy())
	controllerutil.RemoveFinalizer(b, vocabulary.FinalizerBackupFiles)
	return ctrl.Result{}, client.IgnoreNotFound(r.Patch(ctx, b, patch))
}

// joinKey joins a prefix and a key.
func joinKey(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return prefix + "/" + key
}
