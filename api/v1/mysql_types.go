package v1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MySQLKind is the kind of the MySQL resource.
const MySQLKind = "MySQL"

// Condition types the operator owns on a MySQL, read by kstatus, Flux and Argo CD.
const (
	// ConditionReady is True when every child of the MySQL is current and ready.
	ConditionReady = "Ready"
	// ConditionReconciling is True while the operator is converging the children.
	ConditionReconciling = "Reconciling"
	// ConditionStalled is True when the spec cannot be realised without a user change.
	ConditionStalled = "Stalled"
)

// Phase is a one-word summary of a MySQL's state, for humans and printer columns.
// +kubebuilder:validation:Enum=Pending;Running;Failed
type Phase string

// Phases a MySQL goes through.
const (
	// PhasePending means the MySQL is not ready yet.
	PhasePending Phase = "Pending"
	// PhaseRunning means every child is ready.
	PhaseRunning Phase = "Running"
	// PhaseFailed means the operator cannot realise the spec; see the Stalled condition.
	PhaseFailed Phase = "Failed"
)

// VolumeDeletionPolicy says what happens to a MySQL's volumes when it is deleted.
// +kubebuilder:validation:Enum=Retain;Delete
type VolumeDeletionPolicy string

const (
	// VolumeRetain keeps the PersistentVolumeClaims when the MySQL is deleted.
	VolumeRetain VolumeDeletionPolicy = "Retain"
	// VolumeDelete deletes the PersistentVolumeClaims with the MySQL.
	VolumeDelete VolumeDeletionPolicy = "Delete"
)

// SecretKeyReference names a key of a Secret in the MySQL's namespace.
type SecretKeyReference struct {
	// name is the name of the Secret.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	Name string `json:"name"`

	// key is the key in the Secret holding the root password.
	// +kubebuilder:default=password
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Key string `json:"key,omitempty"`
}

// ConfigValue is the value of one my.cnf setting: a single line.
// +kubebuilder:validation:MaxLength=1024
// +kubebuilder:validation:Pattern=`^[^\n\r]*$`
type ConfigValue string

// MySQLSpec is the desired state of a MySQL.
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.storageClassName) || has(self.storageClassName)",message="storageClassName: cannot be removed once set"
// +kubebuilder:validation:XValidation:rule="has(oldSelf.storageClassName) || !has(self.storageClassName)",message="storageClassName: cannot be set after creation"
type MySQLSpec struct {
	// replicas is the number of MySQL pods, from 1 to 10.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10
	// +required
	Replicas int32 `json:"replicas"`

	// version is the MySQL major version, "5.7" or "8.0". It cannot go back from "8.0" to "5.7".
	// +kubebuilder:validation:Enum="5.7";"8.0"
	// +kubebuilder:validation:XValidation:rule="!(oldSelf == '8.0' && self == '5.7')",message="version: cannot be downgraded from 8.0 to 5.7"
	// +required
	Version string `json:"version"`

	// image overrides the container image, which is mysql:<version> by default.
	// +kubebuilder:validation:MaxLength=512
	// +optional
	Image string `json:"image,omitempty"`

	// storageSize is the size of each pod's data volume, in Gi. It cannot
	// shrink. Growing it grows the data volumes in place, without restarting
	// the pods, when their StorageClass allows volume expansion; otherwise
	// the MySQL is Stalled with reason VolumeExpansionRejected.
	// +kubebuilder:default="10Gi"
	// +kubebuilder:validation:Pattern=`^[0-9]+Gi$`
	// +kubebuilder:validation:MaxLength=16
	// +kubebuilder:validation:XValidation:rule="quantity(self).compareTo(quantity(oldSelf)) >= 0",message="storageSize: cannot shrink"
	// +optional
	StorageSize string `json:"storageSize,omitempty"`

	// storageClassName is the StorageClass of the data volumes; empty means the cluster default.
	// It is immutable once the MySQL exists.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="storageClassName: is immutable"
	// +optional
	StorageClassName *string `json:"storageClassName,omitempty"`

	// volumeDeletionPolicy says whether the data volumes are kept (Retain, the default) or
	// deleted (Delete) when the MySQL is deleted.
	// +kubebuilder:default=Retain
	// +optional
	VolumeDeletionPolicy VolumeDeletionPolicy `json:"volumeDeletionPolicy,omitempty"`

	// resources are the compute resources of the mysqld container.
	// +optional
	Resources corev1.ResourceRequirements `json:"resources,omitempty"`

	// config holds my.cnf settings of the [mysqld] section, key to value.
	// +kubebuilder:validation:MaxProperties=64
	// +kubebuilder:validation:XValidation:rule="self.all(k, k.matches('^[A-Za-z0-9_.-]{1,64}$'))",message="config: keys must be 1 to 64 letters, digits, '_', '-' or '.'"
	// +optional
	Config map[string]ConfigValue `json:"config,omitempty"`

	// rootPasswordSecretRef names an existing Secret key holding the root password.
	// When empty the operator generates a password once into the Secret <name>-root.
	// +optional
	RootPasswordSecretRef *SecretKeyReference `json:"rootPasswordSecretRef,omitempty"`

	// nodeSelector constrains the pods to nodes with these labels.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// tolerations let the pods schedule onto tainted nodes.
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`

	// affinity holds the pods' scheduling constraints.
	// +optional
	Affinity *corev1.Affinity `json:"affinity,omitempty"`
}

// MySQLStatus is the observed state of a MySQL.
type MySQLStatus struct {
	// observedGeneration is the generation of the spec last reconciled to a final result.
	// It is -1 until the first reconcile, so that kstatus never calls a new MySQL Current.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// phase is a one-word summary: Pending, Running or Failed.
	// +optional
	Phase Phase `json:"phase,omitempty"`

	// replicas is the number of pods the StatefulSet runs.
	// +optional
	Replicas int32 `json:"replicas,omitempty"`

	// readyReplicas is the number of ready pods.
	// +optional
	ReadyReplicas int32 `json:"readyReplicas,omitempty"`

	// selector is the label selector of the pods, for the scale subresource.
	// +optional
	Selector string `json:"selector,omitempty"`

	// message is a human-readable summary of the state.
	// +optional
	Message string `json:"message,omitempty"`

	// conditions are Ready, Reconciling and Stalled, by the kstatus conventions.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// MySQL is a MySQL database run by the operator as a StatefulSet and its companions.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas,selectorpath=.status.selector
// +kubebuilder:resource:shortName=my,categories=all
// +kubebuilder:printcolumn:name="Replicas",type=integer,JSONPath=`.spec.replicas`
// +kubebuilder:printcolumn:name="Ready",type=integer,JSONPath=`.status.readyReplicas`
// +kubebuilder:printcolumn:name="Version",type=string,JSONPath=`.spec.version`
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:metadata:labels="applyset.kubernetes.io/is-parent-type=true"
type MySQL struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state of the MySQL.
	// +required
	Spec MySQLSpec `json:"spec"`

	// status is the observed state of the MySQL.
	// +kubebuilder:default:={"observedGeneration":-1}
	// +optional
	Status MySQLStatus `json:"status,omitempty"`
}

// GetConditions returns the status conditions, for fluxcd/pkg/runtime/conditions.
func (in *MySQL) GetConditions() []metav1.Condition {
	return in.Status.Conditions
}

// SetConditions sets the status conditions, for fluxcd/pkg/runtime/conditions.
func (in *MySQL) SetConditions(conditions []metav1.Condition) {
	in.Status.Conditions = conditions
}

// MySQLList is a list of MySQL.
// +kubebuilder:object:root=true
type MySQLList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// items are the MySQLs.
	Items []MySQL `json:"items"`
}

func init() {
	SchemeBuilder.Register(&MySQL{}, &MySQLList{})
}
