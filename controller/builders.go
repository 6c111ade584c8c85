package controller

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	policyv1ac "k8s.io/client-go/applyconfigurations/policy/v1"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/applyset"
)

// The builders below are pure: each returns the apply configuration of one
// child from the MySQL alone (and, for the Secret, the password to keep).
// They call no client, so that a table test and a golden file pin each one.

// childLabels returns the labels of every child: the selector labels, the
// managed-by label the cache selects on and the ApplySet membership. The
// parent's own labels are never copied.
func childLabels(m *databasev1.MySQL) map[string]string {
	l := SelectorLabels(m)
	l[LabelManagedBy] = FieldManager
	maps.Copy(l, parent(m).MemberLabels())
	return l
}

// parent returns the ApplySet parent reference of a MySQL.
func parent(m *databasev1.MySQL) applyset.Parent {
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
	return corev1ac.Secret(RootSecretName(m), m.Namespace).
		WithLabels(childLabels(m)).
		WithOwnerReferences(ownerRef(m)).
		WithType(corev1.SecretTypeOpaque).
		WithData(map[string][]byte{rootPasswordKey: password})
}

// MyCnf renders spec.config as the [mysqld] section of my.cnf, keys sorted.
func MyCnf(m *databasev1.MySQL) string {
	var b strings.Builder
	b.WriteString("[mysqld]\n")
	for _, k := range slices.Sorted(maps.Keys(m.Spec.Config)) {
		b.WriteString(k + " = " + string(m.Spec.Config[k]) + "\n")
	}
	return b.String()
}

// ConfigHash returns the hash of my.cnf the pod template carries.
func ConfigHash(m *databasev1.MySQL) string {
	sum := sha256.Sum256([]byte(MyCnf(m)))
	return hex.EncodeToString(sum[:8])
}

// ConfigMap returns the ConfigMap holding my.cnf.
func ConfigMap(m *databasev1.MySQL) *corev1ac.ConfigMapApplyConfiguration {
	return corev1ac.ConfigMap(ConfigMapName(m), m.Namespace).
		WithLabels(childLabels(m)).
		WithOwnerReferences(ownerRef(m)).
		WithData(map[string]string{configKey: MyCnf(m)})
}

func mysqlServicePort() *corev1ac.ServicePortApplyConfiguration {
	return corev1ac.ServicePort().WithName("mysql").WithPort(mysqlPort).
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

// Service returns the client Service, which routes to ready pods.
func Service(m *databasev1.MySQL) *corev1ac.ServiceApplyConfiguration {
	return service(m, ServiceName(m), corev1ac.ServiceSpec().
		WithType(corev1.ServiceTypeClusterIP).
		WithSelector(SelectorLabels(m)))
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

// StatefulSet returns the StatefulSet running mysqld.
func StatefulSet(m *databasev1.MySQL) *appsv1ac.StatefulSetApplyConfiguration {
	whenDeleted := appsv1.RetainPersistentVolumeClaimRetentionPolicyType
	if m.Spec.VolumeDeletionPolicy == databasev1.VolumeDelete {
		whenDeleted = appsv1.DeletePersistentVolumeClaimRetentionPolicyType
	}
	return appsv1ac.StatefulSet(StatefulSetName(m), m.Namespace).
		WithLabels(childLabels(m)).
		WithOwnerReferences(ownerRef(m)).
		WithSpec(appsv1ac.StatefulSetSpec().
			WithReplicas(m.Spec.Replicas).
			WithServiceName(HeadlessServiceName(m)).
			WithSelector(metav1ac.LabelSelector().WithMatchLabels(SelectorLabels(m))).
			WithPersistentVolumeClaimRetentionPolicy(appsv1ac.StatefulSetPersistentVolumeClaimRetentionPolicy().
				WithWhenDeleted(whenDeleted).
				WithWhenScaled(appsv1.RetainPersistentVolumeClaimRetentionPolicyType)).
			WithTemplate(podTemplate(m)).
			WithVolumeClaimTemplates(dataClaim(m)))
}

func dataClaim(m *databasev1.MySQL) *corev1ac.PersistentVolumeClaimApplyConfiguration {
	size := m.Spec.StorageSize
	if size == "" {
		size = defaultStorageSize
	}
	spec := corev1ac.PersistentVolumeClaimSpec().
		WithAccessModes(corev1.ReadWriteOnce).
		WithVolumeMode(corev1.PersistentVolumeFilesystem).
		WithResources(corev1ac.VolumeResourceRequirements().
			WithRequests(corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}))
	if m.Spec.StorageClassName != nil {
		spec.WithStorageClassName(*m.Spec.StorageClassName)
	}
	// A claim template carries no namespace: the StatefulSet's is used.
	// volumeClaimTemplates is an atomic list, so the operator owns the
	// fields the API server defaults in it (volumeMode, status.phase):
	// they are stated here so that an unchanged template compares equal.
	claim := &corev1ac.PersistentVolumeClaimApplyConfiguration{}
	return claim.WithName(dataVolume).WithSpec(spec).
		WithStatus(corev1ac.PersistentVolumeClaimStatus().WithPhase(corev1.ClaimPending))
}

func podTemplate(m *databasev1.MySQL) *corev1ac.PodTemplateSpecApplyConfiguration {
	spec := corev1ac.PodSpec().
		WithSecurityContext(corev1ac.PodSecurityContext().
			WithRunAsNonRoot(true).
			WithRunAsUser(mysqlUID).
			WithRunAsGroup(mysqlUID).
			WithFSGroup(mysqlUID).
			WithSeccompProfile(corev1ac.SeccompProfile().WithType(corev1.SeccompProfileTypeRuntimeDefault))).
		WithContainers(mysqlContainer(m)).
		WithVolumes(
			corev1ac.Volume().WithName(configVolume).
				WithConfigMap(corev1ac.ConfigMapVolumeSource().WithName(ConfigMapName(m))),
			corev1ac.Volume().WithName(runVolume).WithEmptyDir(corev1ac.EmptyDirVolumeSource()),
			corev1ac.Volume().WithName(tmpVolume).WithEmptyDir(corev1ac.EmptyDirVolumeSource()))
	if len(m.Spec.NodeSelector) > 0 {
		spec.WithNodeSelector(m.Spec.NodeSelector)
	}
	for i := range m.Spec.Tolerations {
		spec.WithTolerations(toleration(m.Spec.Tolerations[i]))
	}
	if m.Spec.Affinity != nil {
		spec.WithAffinity(affinity(m.Spec.Affinity))
	}
	return corev1ac.PodTemplateSpec().
		WithLabels(SelectorLabels(m)).
		WithAnnotations(map[string]string{AnnotationConfigHash: ConfigHash(m)}).
		WithSpec(spec)
}

func mysqlContainer(m *databasev1.MySQL) *corev1ac.ContainerApplyConfiguration {
	secret, key := PasswordRef(m)
	c := corev1ac.Container().
		WithName(containerName).
		WithImage(Image(m)).
		WithPorts(corev1ac.ContainerPort().WithName("mysql").WithContainerPort(mysqlPort).WithProtocol(corev1.ProtocolTCP)).
		WithEnv(corev1ac.EnvVar().WithName(passwordEnv).WithValueFrom(corev1ac.EnvVarSource().
			WithSecretKeyRef(corev1ac.SecretKeySelector().WithName(secret).WithKey(key)))).
		WithReadinessProbe(corev1ac.Probe().
			WithExec(corev1ac.ExecAction().WithCommand("sh", "-c", `MYSQL_PWD="$MYSQL_ROOT_PASSWORD" mysql -h 127.0.0.1 -uroot -e "SELECT 1"`)).
			WithInitialDelaySeconds(5).WithPeriodSeconds(10).WithTimeoutSeconds(5)).
		WithLivenessProbe(corev1ac.Probe().
			WithExec(corev1ac.ExecAction().WithCommand("sh", "-c", `MYSQL_PWD="$MYSQL_ROOT_PASSWORD" mysqladmin -h 127.0.0.1 -uroot ping`)).
			WithInitialDelaySeconds(30).WithPeriodSeconds(10).WithTimeoutSeconds(5).WithFailureThreshold(6)).
		WithSecurityContext(corev1ac.SecurityContext().
			WithAllowPrivilegeEscalation(false).
			WithCapabilities(corev1ac.Capabilities().WithDrop("ALL"))).
		WithVolumeMounts(
			corev1ac.VolumeMount().WithName(dataVolume).WithMountPath(dataMountPath),
			corev1ac.VolumeMount().WithName(configVolume).WithMountPath(configMountPath).WithReadOnly(true),
			corev1ac.VolumeMount().WithName(runVolume).WithMountPath(runMountPath),
			corev1ac.VolumeMount().WithName(tmpVolume).WithMountPath(tmpMountPath))
	if r := m.Spec.Resources; len(r.Limits) > 0 || len(r.Requests) > 0 {
		res := corev1ac.ResourceRequirements()
		if len(r.Limits) > 0 {
			res.WithLimits(r.Limits)
		}
		if len(r.Requests) > 0 {
			res.WithRequests(r.Requests)
		}
		c.WithResources(res)
	}
	return c
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
