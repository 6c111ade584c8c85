package children

import (
	"cmp"
	"net"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	databasev1 "github.com/example/mysql-operator/api/v1"
)

// cert-manager: with tls.certManager, the operator writes a Certificate of
// cert-manager.io/v1 as an unstructured object (cert-manager is never a
// dependency of the operator's build or tests), and uses the Secret
// cert-manager writes as it would tls.secretName's. It is owned by the
// MySQL, and is not an ApplySet member: the operator applies it, but
// neither watches nor prunes it.

// CertificateName is the name of the MySQL's Certificate.
func CertificateName(m *databasev1.MySQL) string { return m.Name + "-server" }

// CertManagerSecretName is the Secret the Certificate has cert-manager write.
func CertManagerSecretName(m *databasev1.MySQL) string { return m.Name + "-server-tls" }

// Certificate returns the Certificate of the servers, nil without
// tls.certManager: the names of TLSNames (DNS names and IP addresses; no
// common name, which could not hold a long pod name's 64 characters),
// an ECDSA P-256 key made again at each renewal, usable by servers and
// clients (the agents' mutual TLS), valid 90 days and renewed 30 days
// before it expires.
func Certificate(m *databasev1.MySQL) *unstructured.Unstructured {
	if m.Spec.TLS == nil || m.Spec.TLS.CertManager == nil {
		return nil
	}
	var dns, ips []any
	for _, n := range TLSNames(m) {
		if net.ParseIP(n) != nil {
			ips = append(ips, n)
		} else {
			dns = append(dns, n)
		}
	}
	ref := m.Spec.TLS.CertManager.IssuerRef
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cert-manager.io/v1",
		"kind":       "Certificate",
		"metadata":   extraMetadata(m, CertificateName(m)),
		"spec": map[string]any{
			"secretName":  CertManagerSecretName(m),
			"dnsNames":    dns,
			"ipAddresses": ips,
			"duration":    "2160h",
			"renewBefore": "720h",
			"privateKey":  map[string]any{"algorithm": "ECDSA", "size": int64(256), "rotationPolicy": "Always"},
			"usages":      []any{"digital signature", "server auth", "client auth"},
			"issuerRef":   map[string]any{"name": ref.Name, "kind": cmp.Or(ref.Kind, "Issuer"), "group": cmp.Or(ref.Group, "cert-manager.io")},
		},
	}}
	return u
}
