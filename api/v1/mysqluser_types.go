package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PasswordSecretReference names a key of a Secret, in the object's
// namespace, that holds a password.
type PasswordSecretReference struct {
	// name is the name of the Secret. It needs no label: the operator
	// watches it by name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	Name string `json:"name"`

	// key is the key of the Secret that holds the password.
	// +kubebuilder:default=password
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Key string `json:"key,omitempty"`
}

// MySQLUserSpec is the desired state of an account in a MySQL.
type MySQLUserSpec struct {
	// mysqlRef names the MySQL, in the same namespace, that holds the
	// account. It is immutable.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="mysqlRef: is immutable"
	// +required
	MySQLRef MySQLReference `json:"mysqlRef"`

	// name is the account's user name; metadata.name when unset. It is
	// immutable. root, the server's system accounts and the operator's own
	// (mysqlop-*) are reserved.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="!self.matches(r'[\\x00\\x{10000}-\\x{10FFFF}]')",message="name: cannot contain NUL or characters outside the Basic Multilingual Plane"
	// +optional
	Name string `json:"name,omitempty"`

	// host is the account's client host pattern: "%" (the default) for any
	// host, or a host name, an address or a pattern such as "10.0.%". It is
	// immutable: 'name'@'host' is the account's identity.
	// +kubebuilder:default="%"
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="host: is immutable"
	// +kubebuilder:validation:XValidation:rule="!self.matches(r'[\\x00\\x{10000}-\\x{10FFFF}]')",message="host: cannot contain NUL or characters outside the Basic Multilingual Plane"
	// +optional
	Host string `json:"host,omitempty"`

	// passwordSecretRef names the Secret key holding the account's
	// password. Changing the Secret (or this reference) sets the new
	// password on the server. The password is never written to status,
	// events or logs.
	// +required
	PasswordSecretRef PasswordSecretReference `json:"passwordSecretRef"`

	// maxUserConnections limits the account's simultaneous connections;
	// 0, the default, means no limit of its own.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=2147483647
	// +optional
	MaxUserConnections int32 `json:"maxUserConnections,omitempty"`

	// requireTLS refuses the account's connections that do not use TLS
	// (REQUIRE SSL). The server must then have TLS set up.
	// +optional
	RequireTLS bool `json:"requireTLS,omitempty"`

	// requireX509Subject refuses the account's connections whose client
	// certificate, verified against the servers' CA, does not have this
	// subject (REQUIRE SUBJECT), e.g. "/CN=app/O=shop". It implies TLS.
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:XValidation:rule="self.startsWith('/')",message="requireX509Subject: a subject starts with '/', as /CN=app/O=shop"
	// +optional
	RequireX509Subject string `json:"requireX509Subject,omitempty"`

	// deletionPolicy says what deleting this object does to the account:
	// Delete (the default) drops it, Retain leaves it on the server.
	// +kubebuilder:default=Delete
	// +optional
	DeletionPolicy DeletionPolicy `json:"deletionPolicy,omitempty"`
}

// MySQLUserStatus is the observed state of an account.
type MySQLUserStatus struct {
	SQLObjectStatus `json:",inline"`

	// passwordSecretVersion is the resourceVersion of the password Secret
	// whose password the account was last given. When the Secret's changes,
	// the password is set again. It is not the password, nor derived from it.
	// +optional
	PasswordSecretVersion string `json:"passwordSecretVersion,omitempty"`
}

// MySQLUser is an account in a MySQL, created and kept on its current
// primary with the password of a Secret: a dropped account is created
// again, its attributes put back when they drift.
// +kubebuilder:validation:XValidation:rule="!((has(self.spec.name) ? self.spec.name : self.metadata.name) in ['root', 'PUBLIC', 'mariadb.sys', 'mysql.sys', 'mysql.session', 'mysql.infoschema'] || (has(self.spec.name) ? self.spec.name : self.metadata.name).startsWith('mysqlop-'))",message="spec.name: root, the server's system accounts and the operator's own (mysqlop-*) are reserved"
// +kubebuilder:validation:XValidation:rule="has(self.spec.name) || size(self.metadata.name) <= 32",message="spec.name: required when metadata.name is longer than 32 characters"
// +kubebuilder:validation:XValidation:rule="(has(self.spec.name) ? self.spec.name : self.metadata.name) == (has(oldSelf.spec.name) ? oldSelf.spec.name : oldSelf.metadata.name)",message="spec.name: is immutable (it defaults to metadata.name)"
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=myuser
// +kubebuilder:printcolumn:name="MySQL",type=string,JSONPath=`.spec.mysqlRef.name`
// +kubebuilder:printcolumn:name="User",type=string,JSONPath=`.spec.name`
// +kubebuilder:printcolumn:name="Host",type=string,JSONPath=`.spec.host`
// +kubebuilder:printcolumn:name="Secret",type=string,JSONPath=`.spec.passwordSecretRef.name`,priority=1
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type MySQLUser struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state of the account.
	// +required
	Spec MySQLUserSpec `json:"spec"`

	// status is the observed state of the account.
	// +kubebuilder:default:={"observedGeneration":-1}
	// +optional
	Status MySQLUserStatus `json:"status,omitempty"`
}

// UserName returns the account's user name: spec.name, or metadata.name
// when it is unset.
func (in *MySQLUser) UserName() string {
	if in.Spec.Name != "" {
		return in.Spec.Name
	}
	return in.Name
}

// UserHost returns the account's host pattern: spec.host, "%" when unset.
func (in *MySQLUser) UserHost() string {
	if in.Spec.Host != "" {
		return in.Spec.Host
	}
	return "%"
}

// PasswordKey returns the Secret key of the password: spec.passwordSecretRef.key,
// "password" when unset.
func (in *MySQLUser) PasswordKey() string {
	if in.Spec.PasswordSecretRef.Key != "" {
		return in.Spec.PasswordSecretRef.Key
	}
	return "password"
}

// GetConditions returns the status conditions, for fluxcd/pkg/runtime/conditions.
func (in *MySQLUser) GetConditions() []metav1.Condition { return in.Status.Conditions }

// SetConditions sets the status conditions, for fluxcd/pkg/runtime/conditions.
func (in *MySQLUser) SetConditions(c []metav1.Condition) { in.Status.Conditions = c }

// MySQLUserList is a list of MySQLUser.
// +kubebuilder:object:root=true
type MySQLUserList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// items are the accounts.
	Items []MySQLUser `json:"items"`
}

func init() {
	SchemeBuilder.Register(&MySQLUser{}, &MySQLUserList{})
}
