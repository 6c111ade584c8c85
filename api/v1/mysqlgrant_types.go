package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MySQLGrantSpec is the desired set of privileges of one account on one
// database, one table, or every database.
// +kubebuilder:validation:XValidation:rule="self.database != '*' || self.table == '*'",message="table: a table grant needs a database, not '*'"
// +kubebuilder:validation:XValidation:rule="self.database != '*' || !('ALL PRIVILEGES' in self.privileges)",message="privileges: ALL PRIVILEGES on every database ('*') would give administrative privileges; list the privileges instead"
// +kubebuilder:validation:XValidation:rule="self.table == '*' || !self.privileges.exists(p, p in ['ALTER ROUTINE', 'CREATE ROUTINE', 'CREATE TEMPORARY TABLES', 'EVENT', 'EXECUTE', 'LOCK TABLES'])",message="privileges: ALTER ROUTINE, CREATE ROUTINE, CREATE TEMPORARY TABLES, EVENT, EXECUTE and LOCK TABLES apply to a database, not to a table"
type MySQLGrantSpec struct {
	// mysqlRef names the MySQL, in the same namespace, that holds the
	// account. It is immutable.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="mysqlRef: is immutable"
	// +required
	MySQLRef MySQLReference `json:"mysqlRef"`

	// user is the account's user name (a MySQLUser's spec.name, or an
	// account made otherwise). It is immutable. root, the server's system
	// accounts and the operator's own (mysqlop-*) are reserved.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="user: is immutable"
	// +kubebuilder:validation:XValidation:rule="!(self in ['root', 'PUBLIC', 'mariadb.sys', 'mysql.sys', 'mysql.session', 'mysql.infoschema'] || self.startsWith('mysqlop-'))",message="user: root, the server's system accounts and the operator's own (mysqlop-*) are reserved"
	// +kubebuilder:validation:XValidation:rule="!self.matches(r'[\\x00\\x{10000}-\\x{10FFFF}]')",message="user: cannot contain NUL or characters outside the Basic Multilingual Plane"
	// +required
	User string `json:"user"`

	// host is the account's host pattern, "%" by default. It is immutable.
	// +kubebuilder:default="%"
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="host: is immutable"
	// +kubebuilder:validation:XValidation:rule="!self.matches(r'[\\x00\\x{10000}-\\x{10FFFF}]')",message="host: cannot contain NUL or characters outside the Basic Multilingual Plane"
	// +optional
	Host string `json:"host,omitempty"`

	// database is the database the privileges apply to, or "*" for every
	// database. It names one database: '_' and '%' are not wildcards here.
	// It is immutable.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="database: is immutable"
	// +kubebuilder:validation:XValidation:rule="!self.matches(r'[\\x00\\x{10000}-\\x{10FFFF}]')",message="database: cannot contain NUL or characters outside the Basic Multilingual Plane"
	// +required
	Database string `json:"database"`

	// table is the table of database the privileges apply to, or "*" (the
	// default) for every table. It is immutable.
	// +kubebuilder:default="*"
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="table: is immutable"
	// +kubebuilder:validation:XValidation:rule="!self.matches(r'[\\x00\\x{10000}-\\x{10FFFF}]')",message="table: cannot contain NUL or characters outside the Basic Multilingual Plane"
	// +optional
	Table string `json:"table,omitempty"`

	// privileges are what the account may do there. They are the whole
	// truth: privileges the server shows on this database or table and
	// that are not listed here are revoked.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=20
	// +listType=set
	// +required
	Privileges []Privilege `json:"privileges"`

	// grantOption lets the account pass its privileges on (WITH GRANT OPTION).
	// +optional
	GrantOption bool `json:"grantOption,omitempty"`
}

// MySQLGrant gives one account privileges on one database, one table or
// every database of a MySQL, on its current primary. The privileges are
// compared with SHOW GRANTS on every reconcile: what is missing is granted,
// what is not listed is revoked. Keep one MySQLGrant per account and
// database or table: two would revoke each other's privileges.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=mygrant
// +kubebuilder:printcolumn:name="MySQL",type=string,JSONPath=`.spec.mysqlRef.name`
// +kubebuilder:printcolumn:name="User",type=string,JSONPath=`.spec.user`
// +kubebuilder:printcolumn:name="Host",type=string,JSONPath=`.spec.host`,priority=1
// +kubebuilder:printcolumn:name="Database",type=string,JSONPath=`.spec.database`
// +kubebuilder:printcolumn:name="Table",type=string,JSONPath=`.spec.table`
// +kubebuilder:printcolumn:name="Privileges",type=string,JSONPath=`.spec.privileges`,priority=1
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type MySQLGrant struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired privileges.
	// +required
	Spec MySQLGrantSpec `json:"spec"`

	// status is the observed state of the grant.
	// +kubebuilder:default:={"observedGeneration":-1}
	// +optional
	Status SQLObjectStatus `json:"status,omitempty"`
}

// GrantHost returns the account's host pattern: spec.host, "%" when unset.
func (in *MySQLGrant) GrantHost() string {
	if in.Spec.Host != "" {
		return in.Spec.Host
	}
	return "%"
}

// GrantTable returns the table: spec.table, "*" when unset.
func (in *MySQLGrant) GrantTable() string {
	if in.Spec.Table != "" {
		return in.Spec.Table
	}
	return "*"
}

// GetConditions returns the status conditions, for fluxcd/pkg/runtime/conditions.
func (in *MySQLGrant) GetConditions() []metav1.Condition { return in.Status.Conditions }

// SetConditions sets the status conditions, for fluxcd/pkg/runtime/conditions.
func (in *MySQLGrant) SetConditions(c []metav1.Condition) { in.Status.Conditions = c }

// MySQLGrantList is a list of MySQLGrant.
// +kubebuilder:object:root=true
type MySQLGrantList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// items are the grants.
	Items []MySQLGrant `json:"items"`
}

func init() {
	SchemeBuilder.Register(&MySQLGrant{}, &MySQLGrantList{})
}
