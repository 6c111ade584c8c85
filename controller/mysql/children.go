package mysql

import (
	"context"
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	policyv1ac "k8s.io/client-go/applyconfigurations/policy/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/applyset"
	"github.com/example/mysql-operator/controller/children"
	"github.com/example/mysql-operator/controller/dataplane"
	"github.com/example/mysql-operator/controller/outcome"
	"github.com/example/mysql-operator/controller/vocabulary"
)

// desired is the desired state of a MySQL's children.
type desired struct {
	// members are the children, in apply order.
	members []applyset.Member
	// passwords are the operator's own accounts' passwords.
	passwords map[string][]byte
}

// reconcileParent labels the MySQL as its children's ApplySet parent.
func (r *Reconciler) reconcileParent(ctx context.Context, obj *databasev1.MySQL) error {
	_, err := r.applier().ApplyParent(ctx, obj, applyset.ParentAnnotations(vocabulary.Tooling, children.MemberKinds))
	return err
}

// reconcileChildren applies the children that differ from their desired
// state, grows the data volumes and prunes the children no longer desired,
// and returns what the data plane reads of the Secrets. When the children
// are settled at the fingerprint of all they depend on (see
// settledChildren) and no certificate is due, it only grows the volumes
// and reads the Secrets.
func (r *Reconciler) reconcileChildren(ctx context.Context, obj *databasev1.MySQL, obs *observation) (dataplane.Secrets, error) {
	key := client.ObjectKeyFromObject(obj)
	tls, err := r.tlsSecrets(ctx, obj, time.Now())
	if err != nil {
		return dataplane.Secrets{}, err
	}
	obs.tls = tls
	fp, fpErr := r.childrenFingerprint(ctx, obj)
	if fpErr == nil && (tls == nil || !tls.issued) && r.settled.settled(key, fp) {
		obs.settledAt = &fp
		if err := r.expandVolumes(ctx, obj); err != nil {
			return dataplane.Secrets{}, err
		}
		_, passwords, err := r.operatorSecret(ctx, obj)
		return secretsOf(passwords, tls), err
	}
	r.settled.forget(key)
	d, err := r.desiredChildren(ctx, obj, tls)
	if err != nil {
		return dataplane.Secrets{}, err
	}
	if err := r.expandVolumes(ctx, obj); err != nil {
		return dataplane.Secrets{}, err
	}
	if err := r.applyChildren(ctx, obj, d.members, obs); err != nil {
		return dataplane.Secrets{}, err
	}
	if err := r.applyPodMonitor(ctx, obj); err != nil {
		return dataplane.Secrets{}, err
	}
	pruned, err := r.prune(ctx, obj, d.members)
	if err != nil {
		return dataplane.Secrets{}, err
	}
	if fpErr == nil && len(obs.changed) == 0 && !obs.awaiting && !pruned {
		r.settled.remember(key, fp)
		obs.settledAt = &fp
	}
	return secretsOf(d.passwords, tls), nil
}

// secretsOf is what the data plane reads of the passwords and the TLS.
func secretsOf(passwords map[string][]byte, tls *tlsState) dataplane.Secrets {
	s := dataplane.Secrets{Passwords: passwords}
	if tls != nil {
		s.TLS = tls.secret
	}
	return s
}

// checkedChildren returns, as members that only name them, the children
// whose kstatus decides the MySQL's readiness, in the order they are
// checked: the StatefulSet, and the PodDisruptionBudget that exists only
// with more than one replica.
func checkedChildren(obj *databasev1.MySQL) []applyset.Member {
	checked := []applyset.Member{applyset.Of[appsv1.StatefulSet](appsv1ac.StatefulSet(children.StatefulSetName(obj), obj.Namespace))}
	if obj.Spec.Replicas > 1 {
		checked = append(checked, applyset.Of[policyv1.PodDisruptionBudget](policyv1ac.PodDisruptionBudget(children.PodDisruptionBudgetName(obj), obj.Namespace)))
	}
	return checked
}

// desiredChildren returns the children the MySQL should have.
func (r *Reconciler) desiredChildren(ctx context.Context, obj *databasev1.MySQL, tls *tlsState) (*desired, error) {
	secret, err := r.rootSecret(ctx, obj)
	if err != nil {
		return nil, err
	}
	operator, passwords, err := r.operatorSecret(ctx, obj)
	if err != nil {
		return nil, err
	}
	d := &desired{passwords: passwords}
	if secret != nil {
		d.members = append(d.members, applyset.Of[corev1.Secret](secret))
	}
	d.members = append(d.members, applyset.Of[corev1.Secret](operator))
	if tls != nil {
		d.members = append(d.members, tls.members...)
	}
	d.members = append(d.members,
		applyset.Of[corev1.ConfigMap](children.ConfigMap(obj)),
		applyset.Of[corev1.Service](children.HeadlessService(obj)),
		applyset.Of[corev1.Service](children.Service(obj)),
		applyset.Of[corev1.Service](children.PrimaryService(obj)),
		applyset.Of[corev1.Service](children.ReplicasService(obj)),
		applyset.Of[appsv1.StatefulSet](children.StatefulSet(obj, children.Agent{Image: r.AgentImage, FenceAfter: r.FailoverGrace})),
	)
	if obj.Spec.Replicas > 1 {
		d.members = append(d.members, applyset.Of[policyv1.PodDisruptionBudget](children.PodDisruptionBudget(obj)))
	}
	return d, nil
}

// applyChildren applies each member that differs from its desired state and
// records what changed in obs.
// One event lists every child applied, so that a new MySQL costs one event
// write rather than one per child.
func (r *Reconciler) applyChildren(ctx context.Context, obj *databasev1.MySQL, members []applyset.Member, obs *observation) error {
	log := ctrl.LoggerFrom(ctx)
	a := r.applier()
	var applied []string
	defer func() {
		if len(applied) > 0 {
			vocabulary.Event(r.Recorder, obj, vocabulary.EventApplied, "%s", strings.Join(applied, ", "))
		}
	}()
	for _, m := range members {
		result, err := a.Apply(ctx, m)
		if apierrors.IsInvalid(err) {
			result, err = r.applyMended(ctx, obj, a, m, err)
		}
		if err != nil {
			if apierrors.IsInvalid(err) || apierrors.IsForbidden(err) || apierrors.IsBadRequest(err) {
				return outcome.Stalled(vocabulary.ReasonApplyRejected, "%v", err)
			}
			return err
		}
		switch result {
		case applyset.Unchanged:
			continue
		case applyset.Awaiting:
			obs.awaiting = true
			continue
		}
		obs.changed = append(obs.changed, m.Kind()+"/"+m.Name())
		log.Info("applied child", "kind", m.Kind(), "child", m.Name(), "result", result)
		applied = append(applied, fmt.Sprintf("%s/%s %s", m.Kind(), m.Name(), strings.ToLower(string(result))))
	}
	return nil
}

// prune deletes the members of the MySQL's ApplySet that are no longer
// desired, and says whether it deleted any.
func (r *Reconciler) prune(ctx context.Context, obj *databasev1.MySQL, members []applyset.Member) (bool, error) {
	keep := map[schema.GroupKind]map[string]bool{}
	for _, m := range members {
		gk := m.GroupKind()
		if keep[gk] == nil {
			keep[gk] = map[string]bool{}
		}
		keep[gk][m.Name()] = true
	}
	pruned, err := r.applier().Prune(ctx, children.Parent(obj).ID(), obj.Namespace, children.PrunedLists(), keep)
	names := make([]string, 0, len(pruned))
	for _, p := range pruned {
		ctrl.LoggerFrom(ctx).Info("pruned child", "kind", p.Kind, "child", p.Name)
		names = append(names, p.Kind+"/"+p.Name+" pruned")
	}
	if len(names) > 0 {
		vocabulary.Event(r.Recorder, obj, vocabulary.EventPruned, "%s", strings.Join(names, ", "))
	}
	return len(pruned) > 0, err
}
