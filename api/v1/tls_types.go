package v1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// TLSMode says whether a MySQL's servers speak TLS, and whether they
// refuse clients that do not.
// +kubebuilder:validation:Enum=Disabled;Enabled;Required
type TLSMode string

const (
	// TLSDisabled: the servers have no certificate; every connection is in clear.
	TLSDisabled TLSMode = "Disabled"
	// TLSEnabled: the servers offer TLS; clients may still connect in clear.
	TLSEnabled TLSMode = "Enabled"
	// TLSRequired: the servers refuse clients that do not use TLS over TCP
	// (require_secure_transport); the local socket stays open to the pod.
	TLSRequired TLSMode = "Required"
)

// TLSSpec is how a MySQL's servers speak TLS, and whose certificate they
// use: by default the operator's own CA (one per MySQL, in the Secret
// <name>-ca) signs it, renewed at two thirds of its life; or cert-manager
// issues it; or a Secret of yours holds it. In every case the servers use
// the Secret <name>-tls (tls.crt, tls.key, ca.crt), which the operator
// writes only with a certificate that passes its checks, so that a bad
// one never reaches the servers; a new certificate is reloaded without a
// restart.
// +kubebuilder:validation:XValidation:rule="!(has(self.secretName) && has(self.certManager))",message="tls: secretName and certManager cannot both be set"
type TLSSpec struct {
	// mode is Disabled, Enabled (the servers offer TLS) or Required (they
	// refuse unencrypted clients). Enabled when left out.
	// +kubebuilder:default=Enabled
	// +optional
	Mode TLSMode `json:"mode,omitempty"`

	// secretName names a Secret of the MySQL's namespace holding the
	// servers' certificate (tls.crt, naming every pod under the headless
	// Service, <pod>.<name>-headless.<namespace>.svc, and the Services),
	// its key (tls.key) and the CA that signed it (ca.crt). You renew it;
	// the operator warns (condition CertificateExpiring) once it is two
	// thirds through its life.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`
	// +optional
	SecretName string `json:"secretName,omitempty"`

	// certManager has cert-manager issue the certificate: the operator
	// writes a cert-manager.io/v1 Certificate <name>-server, whose Secret
	// <name>-server-tls it then uses as it would secretName's.
	// +optional
	CertManager *CertManagerTLS `json:"certManager,omitempty"`
}

// CertManagerTLS names the cert-manager issuer of the servers' certificate.
type CertManagerTLS struct {
	// issuerRef is the Issuer (of the MySQL's namespace) or ClusterIssuer
	// that signs the certificate; it must write the CA into ca.crt (a CA
	// or Vault issuer does).
	IssuerRef IssuerReference `json:"issuerRef"`
}

// IssuerReference names a cert-manager issuer.
type IssuerReference struct {
	// name is the issuer's name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// kind is Issuer or ClusterIssuer.
	// +kubebuilder:validation:Enum=Issuer;ClusterIssuer
	// +kubebuilder:default=Issuer
	// +optional
	Kind string `json:"kind,omitempty"`
	// group is the issuer's API group: cert-manager.io, or an external
	// issuer's.
	// +kubebuilder:default=cert-manager.io
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Group string `json:"group,omitempty"`
}

// TLSStatus is what the operator knows of a MySQL's certificates.
type TLSStatus struct {
	// secretName is the Secret of the servers' certificate and CA.
	SecretName string `json:"secretName"`
	// notAfter is when the servers' certificate expires.
	NotAfter metav1.Time `json:"notAfter"`
	// renewAt is when the operator renews it: two thirds into its life.
	RenewAt metav1.Time `json:"renewAt"`
	// caNotAfter is when the CA expires.
	CANotAfter metav1.Time `json:"caNotAfter"`
	// source is where the certificate comes from: Operator (its own CA),
	// CertManager or Secret (tls.secretName).
	Source string `json:"source"`
	// caRotation is the step a rotation of the operator's CA is at:
	// TrustNewCA (the new CA is trusted beside the old one, certificates
	// are still signed by the old), then SignWithNewCA (certificates are
	// signed by the new CA, the old one is still trusted). Each step waits
	// for every instance to present the certificate issued for it. Absent
	// when no rotation is under way.
	// +optional
	CARotation CARotationStep `json:"caRotation,omitempty"`
}

// CARotationStep is the step a rotation of the operator's CA is at.
type CARotationStep string

// The steps of a CA rotation.
const (
	// CARotationTrust: the new CA is trusted beside the old one, and the
	// certificates are still signed by the old.
	CARotationTrust CARotationStep = "TrustNewCA"
	// CARotationSign: the certificates are signed by the new CA, and the
	// old one is still trusted.
	CARotationSign CARotationStep = "SignWithNewCA"
)

// TLSModeOf is the MySQL's TLS mode: Enabled when the spec leaves it out.
func TLSModeOf(m *MySQL) TLSMode {
	if m.Spec.TLS == nil || m.Spec.TLS.Mode == "" {
		return TLSEnabled
	}
	return m.Spec.TLS.Mode
}

// ConditionCertificateExpiring is True while the servers' certificate,
// renewed by its owner (cert-manager, or tls.secretName's), is past two thirds of its
// life; its message says when it expires.
const ConditionCertificateExpiring = "CertificateExpiring"
