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
	// ConditionEndOfLife is True when the MySQL runs a version its vendor
	// no longer supports. It does not fail the MySQL; kstatus ignores it.
	ConditionEndOfLife = "EndOfLife"
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

// Engine is the database server software of a MySQL.
// +kubebuilder:validation:Enum=MySQL;MariaDB
type Engine string

const (
	// EngineMySQL is Oracle MySQL, versions 5.7, 8.0, 8.4 and 9.7.
	EngineMySQL Engine = "MySQL"
	// EngineMariaDB is MariaDB Server, versions 10.11, 11.4 and 11.8.
	EngineMariaDB Engine = "MariaDB"
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
// +kubebuilder:validation:XValidation:rule="(has(self.engine) && self.engine == 'MariaDB') ? self.version in ['10.11', '11.4', '11.8'] : self.version in ['5.7', '8.0', '8.4', '9.7']",message="version: MySQL takes 5.7, 8.0, 8.4 or 9.7; MariaDB takes 10.11, 11.4 or 11.8"
// +kubebuilder:validation:XValidation:rule="!has(self.preferredPrimary) || self.preferredPrimary < self.replicas",message="preferredPrimary: must be the ordinal of an instance, below replicas"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.storageClassName) || has(self.storageClassName)",message="storageClassName: cannot be removed once set"
// +kubebuilder:validation:XValidation:rule="has(oldSelf.storageClassName) || !has(self.storageClassName)",message="storageClassName: cannot be set after creation"
// +kubebuilder:validation:XValidation:rule="has(oldSelf.restore) == has(self.restore)",message="restore: can be set only when the MySQL is created"
type MySQLSpec struct {
	// replicas is the number of MySQL pods, from 1 to 10.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10
	// +required
	Replicas int32 `json:"replicas"`

	// engine is the server software: MySQL (the default) or MariaDB. It is
	// immutable: moving data between engines is a migration, not an upgrade.
	// +kubebuilder:default=MySQL
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="engine: is immutable"
	// +optional
	Engine Engine `json:"engine,omitempty"`

	// version is the server's major version: for MySQL "8.4" or "9.7" (the
	// LTS lines; "5.7" and "8.0" are end of life), for MariaDB "10.11",
	// "11.4" or "11.8". It changes only by an in-place upgrade to the next
	// version (5.7 -> 8.0 -> 8.4 -> 9.7, 10.11 -> 11.4 -> 11.8): never
	// down, never skipping one.
	// +kubebuilder:validation:Enum="5.7";"8.0";"8.4";"9.7";"10.11";"11.4";"11.8"
	// +kubebuilder:validation:XValidation:rule="self == oldSelf || [['5.7', '8.0'], ['8.0', '8.4'], ['8.4', '9.7'], ['10.11', '11.4'], ['11.4', '11.8']].exists(s, s[0] == oldSelf && s[1] == self)",message="version: cannot be downgraded or skip a version; only an in-place upgrade to the next one is allowed (5.7 -> 8.0 -> 8.4 -> 9.7, 10.11 -> 11.4 -> 11.8)"
	// +required
	Version string `json:"version"`

	// image overrides the container image, which is mysql:<version> or
	// mariadb:<version> by default. The operator starts the server itself
	// (it does not rely on the image's entrypoint), so any image with the
	// engine's server binaries works.
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

	// resources are the compute resources of the mysqld container. A memory limit (else
	// request) sizes the buffer pool and max_connections unless config sets them. Request
	// CPU: without a request the container gets the least CPU weight of a busy node.
	// +optional
	Resources corev1.ResourceRequirements `json:"resources,omitempty"`

	// config holds my.cnf settings of the [mysqld] section, key to value.
	// The settings the operator owns (paths, ports, server identity,
	// binary logs, GTIDs, read-only, replication, semi-sync and TLS) are
	// refused.
	// +kubebuilder:validation:MaxProperties=64
	// +kubebuilder:validation:XValidation:rule="self.all(k, k.matches('^[A-Za-z0-9_.-]{1,64}$'))",message="config: keys must be 1 to 64 letters, digits, '_', '-' or '.'"
	// +kubebuilder:validation:XValidation:rule="!self.exists(k, k.lowerAscii().replace('-', '_') in ['datadir', 'socket', 'port', 'bind_address', 'pid_file', 'tmpdir', 'user', 'skip_networking', 'server_id', 'report_host', 'log_bin', 'log_bin_basename', 'relay_log', 'gtid_mode', 'enforce_gtid_consistency', 'gtid_strict_mode', 'gtid_domain_id', 'read_only', 'super_read_only', 'skip_slave_start', 'skip_replica_start', 'log_slave_updates', 'log_replica_updates', 'binlog_format', 'ssl_ca', 'ssl_capath', 'ssl_cert', 'ssl_key', 'require_secure_transport'] || k.lowerAscii().replace('-', '_').startsWith('rpl_semi_sync'))",message="config: a setting the operator owns is refused (paths, port, server_id, report_host, binary logs, GTIDs, read_only, replication, semi-sync, TLS)"
	// +optional
	Config map[string]ConfigValue `json:"config,omitempty"`

	// rootPasswordSecretRef names an existing Secret key holding the root password.
	// When empty the operator generates a password once into the Secret <name>-root.
	// +optional
	RootPasswordSecretRef *SecretKeyReference `json:"rootPasswordSecretRef,omitempty"`

	// preferredPrimary is the ordinal of the instance that should be the
	// primary (pod <name>-<ordinal>). When it is a healthy replica the
	// operator switches over to it: the primary turns read-only, its
	// clients are cut off, the candidate catches up on every transaction
	// and is promoted. Git owns it; the operator never writes it: after a
	// failover elsewhere it switches back once this instance is healthy.
	// Unset, the operator keeps whichever primary it has.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=9
	// +optional
	PreferredPrimary *int32 `json:"preferredPrimary,omitempty"`

	// nodeSelector constrains the pods to nodes with these labels.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// tolerations let the pods schedule onto tainted nodes.
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`

	// affinity holds the pods' scheduling constraints.
	// +optional
	Affinity *corev1.Affinity `json:"affinity,omitempty"`

	// backup is how the MySQL is backed up: a schedule, the storage,
	// retention and the binary log archive (see BackupPolicy).
	// +optional
	Backup *BackupPolicy `json:"backup,omitempty"`

	// tls is how the servers speak TLS: Enabled, with certificates from the
	// operator's own CA, when left out (see TLSSpec).
	// +optional
	TLS *TLSSpec `json:"tls,omitempty"`

	// restore makes the new MySQL from a backup, and to a point in time. It
	// can be set only when the MySQL is created, and never changes.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="restore: is immutable"
	// +optional
	Restore *RestoreSpec `json:"restore,omitempty"`
}

// InstanceRole is the part an instance plays in a MySQL.
// +kubebuilder:validation:Enum=Primary;Replica;Errant;Empty;Unknown
type InstanceRole string

// Roles of an instance.
const (
	// RolePrimary is the writable source of the MySQL.
	RolePrimary InstanceRole = "Primary"
	// RoleReplica replicates from the primary.
	RoleReplica InstanceRole = "Replica"
	// RoleErrant has transactions the primary never had: it is out of the
	// replicas' Service, never promoted and never re-initialised by the
	// operator; a human decides.
	RoleErrant InstanceRole = "Errant"
	// RoleEmpty has no data yet and waits to be seeded.
	RoleEmpty InstanceRole = "Empty"
	// RoleUnknown could not be observed.
	RoleUnknown InstanceRole = "Unknown"
)

// InstanceStatus is what the operator last observed of one instance.
type InstanceStatus struct {
	// name is the pod's name.
	Name string `json:"name"`

	// role is the part the instance plays.
	Role InstanceRole `json:"role"`

	// ready is true for a writable primary, and for a replica whose
	// replication threads run without error under the lag threshold.
	Ready bool `json:"ready"`

	// message says why the instance is not ready.
	// +optional
	Message string `json:"message,omitempty"`

	// gtidExecuted is the instance's executed GTID set, refreshed at most
	// once a minute while nothing else changes.
	// +optional
	GTIDExecuted string `json:"gtidExecuted,omitempty"`

	// lagSeconds is how far a replica is behind its source, refreshed as
	// gtidExecuted is.
	// +optional
	LagSeconds *int64 `json:"lagSeconds,omitempty"`

	// certificateNotAfter is when the certificate the server presents to
	// new TLS sessions expires, as the server reports it: a renewed
	// certificate shows here once the server has loaded it.
	// +optional
	CertificateNotAfter *metav1.Time `json:"certificateNotAfter,omitempty"`
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

	// currentPrimary is the pod the operator made primary. It lives in
	// status, never in spec, so that a GitOps tool never reverts it.
	// +optional
	CurrentPrimary string `json:"currentPrimary,omitempty"`

	// lastFailover is the last failover the operator made.
	// +optional
	LastFailover *PrimaryChange `json:"lastFailover,omitempty"`

	// switchover answers the last switchover asked for with the
	// annotation database.example.com/switchover.
	// +optional
	Switchover *SwitchoverStatus `json:"switchover,omitempty"`

	// instances is what the operator last observed of each instance.
	// +listType=map
	// +listMapKey=name
	// +optional
	Instances []InstanceStatus `json:"instances,omitempty"`

	// message is a human-readable summary of the state.
	// +optional
	Message string `json:"message,omitempty"`

	// restore is what the restore that made the MySQL reached, once
	// instance 0 runs on it.
	// +optional
	Restore *RestoreStatus `json:"restore,omitempty"`

	// tls is the servers' certificate: its Secret, when it expires and when
	// it is renewed; absent while TLS is disabled.
	// +optional
	TLS *TLSStatus `json:"tls,omitempty"`

	// conditions are Ready, Reconciling and Stalled, by the kstatus
	// conventions, and EndOfLife when the version is no longer supported.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// MySQL is a MySQL database run by the operator as a StatefulSet and its companions.
// Its name names the StatefulSet, its pods and Services, so it is a DNS label
// short enough for a pod's controller-revision-hash label.
// +kubebuilder:validation:XValidation:rule="self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')",message="metadata.name: must start with a lowercase letter and hold only lowercase letters, digits and '-', since it names Services"
// +kubebuilder:validation:XValidation:rule="size(self.metadata.name) <= 52",message="metadata.name: at most 52 characters, so that its pods' controller-revision-hash label fits in 63"
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas,selectorpath=.status.selector
// +kubebuilder:resource:shortName=my,categories=all
// +kubebuilder:printcolumn:name="Replicas",type=integer,JSONPath=`.spec.replicas`
// +kubebuilder:printcolumn:name="Ready",type=integer,JSONPath=`.status.readyReplicas`
// +kubebuilder:printcolumn:name="Engine",type=string,JSONPath=`.spec.engine`,priority=1
// +kubebuilder:printcolumn:name="Version",type=string,JSONPath=`.spec.version`
// +kubebuilder:printcolumn:name="Primary",type=string,JSONPath=`.status.currentPrimary`
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
