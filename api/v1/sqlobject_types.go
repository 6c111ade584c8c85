package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The kinds of this file's siblings (MySQLDatabase, MySQLUser, MySQLGrant) are
// SQL objects: things that live inside a MySQL's server, declared in Git and
// kept by the operator on the MySQL's current primary.

// Kinds of the SQL objects.
const (
	// MySQLDatabaseKind is the kind of the MySQLDatabase resource.
	MySQLDatabaseKind = "MySQLDatabase"
	// MySQLUserKind is the kind of the MySQLUser resource.
	MySQLUserKind = "MySQLUser"
	// MySQLGrantKind is the kind of the MySQLGrant resource.
	MySQLGrantKind = "MySQLGrant"
)

// MySQLReference names a MySQL in the namespace of the object that refers to it.
type MySQLReference struct {
	// name is the name of the MySQL.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=52
	// +required
	Name string `json:"name"`
}

// DeletionPolicy says what happens on the server when a database or user
// object is deleted.
// +kubebuilder:validation:Enum=Retain;Delete
type DeletionPolicy string

const (
	// DeletionRetain leaves the database or account on the server.
	DeletionRetain DeletionPolicy = "Retain"
	// DeletionDelete drops the database (with its data) or the account.
	DeletionDelete DeletionPolicy = "Delete"
)

// Privilege is a database- or table-level privilege, in the server's
// spelling. Administrative privileges (SUPER, FILE, PROCESS, ...) cannot
// be granted this way.
// +kubebuilder:validation:Enum="ALL PRIVILEGES";ALTER;"ALTER ROUTINE";CREATE;"CREATE ROUTINE";"CREATE TEMPORARY TABLES";"CREATE VIEW";DELETE;"DELETE HISTORY";DROP;EVENT;EXECUTE;INDEX;INSERT;"LOCK TABLES";REFERENCES;SELECT;"SHOW VIEW";TRIGGER;UPDATE
type Privilege string

// SQLObjectStatus is the observed state of a database, user or grant.
type SQLObjectStatus struct {
	// observedGeneration is the generation of the spec last reconciled to a
	// final result. It is -1 until the first reconcile, so that kstatus never
	// calls a new object Current.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// conditions are Ready, Reconciling and Stalled, by the kstatus conventions.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}
