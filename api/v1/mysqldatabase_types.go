package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MySQLDatabaseSpec is the desired state of a database in a MySQL.
type MySQLDatabaseSpec struct {
	// mysqlRef names the MySQL, in the same namespace, that holds the
	// database. It is immutable.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="mysqlRef: is immutable"
	// +required
	MySQLRef MySQLReference `json:"mysqlRef"`

	// name is the database's name on the server; metadata.name when unset.
	// It is immutable: a rename would be a new, empty database. The
	// server's own databases (mysql, sys, ...) are refused.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="!self.endsWith(' ')",message="name: cannot end with a space"
	// +kubebuilder:validation:XValidation:rule="!self.matches(r'[\\x00\\x{10000}-\\x{10FFFF}]')",message="name: cannot contain NUL or characters outside the Basic Multilingual Plane"
	// +optional
	Name string `json:"name,omitempty"`

	// characterSet is the database's default character set ("utf8mb4");
	// unset keeps the server's default. Changing it applies to tables
	// created afterwards.
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9_]+$`
	// +optional
	CharacterSet string `json:"characterSet,omitempty"`

	// collation is the database's default collation ("utf8mb4_unicode_ci");
	// unset keeps the character set's default.
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9_]+$`
	// +optional
	Collation string `json:"collation,omitempty"`

	// deletionPolicy says what deleting this object does to the database:
	// Retain (the default: a database is data) leaves it on the server,
	// Delete drops it with every table in it.
	// +kubebuilder:default=Retain
	// +optional
	DeletionPolicy DeletionPolicy `json:"deletionPolicy,omitempty"`
}

// MySQLDatabase is a database in a MySQL, created and kept on its current
// primary: its character set and collation are put back when they drift.
// +kubebuilder:validation:XValidation:rule="!((has(self.spec.name) ? self.spec.name : self.metadata.name).lowerAscii() in ['mysql', 'information_schema', 'performance_schema', 'sys', 'mysql_operator'])",message="spec.name: mysql, information_schema, performance_schema and sys are the server's own databases, mysql_operator the operator's"
// +kubebuilder:validation:XValidation:rule="has(self.spec.name) || size(self.metadata.name) <= 64",message="spec.name: required when metadata.name is longer than 64 characters"
// +kubebuilder:validation:XValidation:rule="(has(self.spec.name) ? self.spec.name : self.metadata.name) == (has(oldSelf.spec.name) ? oldSelf.spec.name : oldSelf.metadata.name)",message="spec.name: is immutable (it defaults to metadata.name)"
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=mydb
// +kubebuilder:printcolumn:name="MySQL",type=string,JSONPath=`.spec.mysqlRef.name`
// +kubebuilder:printcolumn:name="Database",type=string,JSONPath=`.spec.name`
// +kubebuilder:printcolumn:name="Deletion",type=string,JSONPath=`.spec.deletionPolicy`,priority=1
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type MySQLDatabase struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state of the database.
	// +required
	Spec MySQLDatabaseSpec `json:"spec"`

	// status is the observed state of the database.
	// +kubebuilder:default:={"observedGeneration":-1}
	// +optional
	Status SQLObjectStatus `json:"status,omitempty"`
}

// DatabaseName returns the database's name on the server: spec.name, or
// metadata.name when it is unset.
func (in *MySQLDatabase) DatabaseName() string {
	if in.Spec.Name != "" {
		return in.Spec.Name
	}
	return in.Name
}

// GetConditions returns the status conditions, for fluxcd/pkg/runtime/conditions.
func (in *MySQLDatabase) GetConditions() []metav1.Condition { return in.Status.Conditions }

// SetConditions sets the status conditions, for fluxcd/pkg/runtime/conditions.
func (in *MySQLDatabase) SetConditions(c []metav1.Condition) { in.Status.Conditions = c }

// MySQLDatabaseList is a list of MySQLDatabase.
// +kubebuilder:object:root=true
type MySQLDatabaseList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// items are the databases.
	Items []MySQLDatabase `json:"items"`
}

func init() {
	SchemeBuilder.Register(&MySQLDatabase{}, &MySQLDatabaseList{})
}
