package children

import (
	"encoding/json"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	policyv1ac "k8s.io/client-go/applyconfigurations/policy/v1"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/applyset"
	"github.com/example/mysql-operator/controller/vocabulary"
)

// The builders below are pure: each returns the apply configuration of one
// child from the MySQL alone (and, for the Secret, the password to keep).
// They call no client, so that a table test and a golden file pin each one.

// childLabels returns the labels of every child: the selector labels, the
// managed-by label and the shard key the cache selects on, and the ApplySet
// membership. The parent's other labels are never copied.
func childLabels(m *databasev1.MySQL) map[string]string {
	l := PodLabels(m)
	if shard, ok := m.Labels[vocabulary.LabelShard]; ok {
		l[vocabulary.LabelShard] = shard
	}
	maps.Copy(l, Parent(m).MemberLabels())
	return l
}

// Parent returns the ApplySet parent reference of a MySQL.
func Parent(m *databasev1.MySQL) applyset.Parent {
	return applyset.Parent{Name: m.Name, Namespace: m.Namespace, GroupKind: databasev1.GroupVersion.WithKind(databasev1.MySQLKind).GroupKind()}
}

// ownerRef returns the controller owner reference to the MySQL, so that the
// garbage collector deletes the children with it.
func ownerRef(m *databasev1.MySQL) *metav1ac.OwnerReferenceApplyConfiguration {
	return metav1ac.OwnerReference().
		WithAPIVersion(databasev1.GroupVersion.String()).
		WithKind(databasev1.MySQLKind).
		WithName(m.Name).
		WithUID(m.UID).
		WithController(true).
		WithBlockOwnerDeletion(true)
}

// RootSecret returns the Secret holding the root password. The caller passes
// the password already stored, or a new one only when none exists; the data
// is sent as data, never stringData, so an unchanged apply is a no-op.
func RootSecret(m *databasev1.MySQL, password []byte) *corev1ac.SecretApplyConfiguration {
	return passwordSecret(m, RootSecretName(m), map[string][]byte{RootPasswordKey: password})
}

// OperatorSecret returns the Secret of the passwords of the operator's own
// database accounts (admin, replication, agent), generated once.
func OperatorSecret(m *databasev1.MySQL, data map[string][]byte) *corev1ac.SecretApplyConfiguration {
	return passwordSecret(m, OperatorSecretName(m), map[string][]byte{
		AdminPasswordKey: data[AdminPasswordKey], ReplPasswordKey: data[ReplPasswordKey], AgentPasswordKey: data[AgentPasswordKey]})
}

// passwordSecret returns a Secret of passwords. It is owned by the MySQL,
// and deleted with it, only when its volumes are (volumeDeletionPolicy
// Delete): retained volumes keep the passwords that open them, so that a
// MySQL created again over them logs in.
func passwordSecret(m *databasev1.MySQL, name string, data map[string][]byte) *corev1ac.SecretApplyConfiguration {
	s := corev1ac.Secret(name, m.Namespace).
		WithLabels(childLabels(m)).
		WithType(corev1.SecretTypeOpaque).
		WithData(data)
	if m.Spec.VolumeDeletionPolicy == databasev1.VolumeDelete {
		s.WithOwnerReferences(ownerRef(m))
	}
	return s
}

// ConfigMap returns the ConfigMap holding my.cnf, and the backup and
// restore configs of the agents (see configData).
func ConfigMap(m *databasev1.MySQL) *corev1ac.ConfigMapApplyConfiguration {
	return corev1ac.ConfigMap(ConfigMapName(m), m.Namespace).
		WithLabels(childLabels(m)).
		WithOwnerReferences(ownerRef(m)).
		WithData(configData(m))
}

func mysqlServicePort() *corev1ac.ServicePortApplyConfiguration {
	return corev1ac.ServicePort().WithName("mysql").WithPort(MySQLPort).
		WithTargetPort(intstr.FromString("mysql")).WithProtocol(corev1.ProtocolTCP)
}

// service returns a child Service of the MySQL with its labels, owner
// and port; the callers add the rest of its spec.
func service(m *databasev1.MySQL, name string, spec *corev1ac.ServiceSpecApplyConfiguration) *corev1ac.ServiceApplyConfiguration {
	return corev1ac.Service(name, m.Namespace).
		WithLabels(childLabels(m)).
		WithOwnerReferences(ownerRef(m)).
		WithSpec(spec.WithPorts(mysqlServicePort()))
}

// HeadlessService returns the StatefulSet's governing Service, which
// publishes not-ready pods so that replicas can find each other.
func HeadlessService(m *databasev1.MySQL) *corev1ac.ServiceApplyConfiguration {
	return service(m, HeadlessServiceName(m), corev1ac.ServiceSpec().
		WithClusterIP(corev1.ClusterIPNone).
		WithPublishNotReadyAddresses(true).
		WithSelector(SelectorLabels(m)))
}

// Service returns the client Service, which routes to the primary: the
// name clients had before the MySQL had replicas keeps taking writes.
func Service(m *databasev1.MySQL) *corev1ac.ServiceApplyConfiguration {
	return roleService(m, ServiceName(m), vocabulary.RolePrimary)
}

// PrimaryService returns the Service of the primary, read-write.
func PrimaryService(m *databasev1.MySQL) *corev1ac.ServiceApplyConfiguration {
	return roleService(m, PrimaryServiceName(m), vocabulary.RolePrimary)
}

// ReplicasService returns the Service of the ready replicas, read-only.
func ReplicasService(m *databasev1.MySQL) *corev1ac.ServiceApplyConfiguration {
	return roleService(m, ReplicasServiceName(m), vocabulary.RoleReplica)
}

// roleService returns a Service of the ready pods of one role, which the
// operator keeps in their LabelRole.
func roleService(m *databasev1.MySQL, name, role string) *corev1ac.ServiceApplyConfiguration {
	selector := SelectorLabels(m)
	selector[vocabulary.LabelRole] = role
	return service(m, name, corev1ac.ServiceSpec().
		WithType(corev1.ServiceTypeClusterIP).
		WithSelector(selector))
}

// PodDisruptionBudget returns the PodDisruptionBudget, which lets one pod go
// at a time. The caller applies it only when replicas > 1.
func PodDisruptionBudget(m *databasev1.MySQL) *policyv1ac.PodDisruptionBudgetApplyConfiguration {
	return policyv1ac.PodDisruptionBudget(PodDisruptionBudgetName(m), m.Namespace).
		WithLabels(childLabels(m)).
		WithOwnerReferences(ownerRef(m)).
		WithSpec(policyv1ac.PodDisruptionBudgetSpec().
			WithMaxUnavailable(intstr.FromInt32(1)).
			WithSelector(metav1ac.LabelSelector().WithMatchLabels(SelectorLabels(m))))
}

// toleration and affinity carry typed spec fields into apply configurations,
// which share their JSON form.
func toleration(t corev1.Toleration) *corev1ac.TolerationApplyConfiguration {
	return viaJSON[corev1ac.TolerationApplyConfiguration](t)
}

func affinity(a *corev1.Affinity) *corev1ac.AffinityApplyConfiguration {
	return viaJSON[corev1ac.AffinityApplyConfiguration](a)
}

// viaJSON converts a typed API value to the apply configuration of the same
// JSON shape. Typed API values always marshal, so an error is a programming
// error and panics.
func viaJSON[T any](in any) *T {
	data, err := json.Marshal(in)
	if err != nil {
		panic(fmt.Sprintf("marshal %T: %v", in, err))
	}
	out := new(T)
	if err := json.Unmarshal(data, out); err != nil {
		panic(fmt.Sprintf("unmarshal %T into %T: %v", in, out, err))
	}
	return out
}
