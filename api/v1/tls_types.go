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

// TLSSpec is how a MySQL's servers speak TLS. The operator's own CA (one
// per MySQL, in the Secret <name>-ca) signs the servers' certificate (in
// <name>-tls, with ca.crt for clients to verify the servers against),
// which names every pod under the headless Service, the client Services
// and localhost, and is renewed at two thirds of its life without a
// restart.
type TLSSpec struct {
	// mode is Disabled, Enabled (the servers offer TLS) or Required (they
	// refuse unencrypted clients). Enabled when left out.
	// +kubebuilder:default=Enabled
	// +optional
	Mode TLSMode `json:"mode,omitempty"`
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
}

// TLSModeOf is the MySQL's TLS mode: Enabled when the spec leaves it out.
func TLSModeOf(m *MySQL) TLSMode {
	if m.Spec.TLS == nil || m.Spec.TLS.Mode == "" {
		return TLSEnabled
	}
	return m.Spec.TLS.Mode
}
