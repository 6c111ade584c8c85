package children

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/certs"
	"github.com/example/mysql-operator/controller/vocabulary"
	"github.com/example/mysql-operator/dbop"
)

// TLS: the servers' certificate is the Secret <name>-tls (tls.crt, tls.key,
// ca.crt), mounted whole, never by subPath, so that the kubelet's update of
// a renewed certificate reaches the files the server reloads (FLUSH SSL,
// which the agent runs when they change). The CA that signs it is
// <name>-ca; neither Secret's content is in the config hash, so a renewal
// restarts nothing.
const (
	tlsVolume = "tls"
	// TLSMountPath is where the servers' certificate, key and CA are, in
	// the server's and the agent's containers.
	TLSMountPath = "/etc/mysql-operator/tls"
	// TLSCAPath is the CA the servers and replicas trust.
	TLSCAPath = TLSMountPath + "/" + certs.CAKey
)

// TLSSecretName is the Secret of the servers' certificate.
func TLSSecretName(m *databasev1.MySQL) string { return m.Name + "-tls" }

// CASecretName is the Secret of the MySQL's CA.
func CASecretName(m *databasev1.MySQL) string { return m.Name + "-ca" }

// tlsOn says whether the servers speak TLS.
func tlsOn(m *databasev1.MySQL) bool { return databasev1.TLSModeOf(m) != databasev1.TLSDisabled }

// PodDNSName is the name of a pod under the headless Service, which its
// certificate names and TLS clients verify.
func PodDNSName(m *databasev1.MySQL, pod string) string {
	return pod + "." + HeadlessServiceName(m) + "." + m.Namespace + ".svc"
}

// ReplicationHost is the name replicas reach pod's server by, and whether
// it is its DNS name under the headless Service (which the certificate
// holds, so that replicas verify it): a pod of the StatefulSet has that
// name (its controller sets the pod's hostname and subdomain); another
// (the envtest harness's) is reached at its address.
func ReplicationHost(m *databasev1.MySQL, pod *corev1.Pod) (string, bool) {
	if pod.Spec.Hostname == pod.Name && pod.Spec.Subdomain == HeadlessServiceName(m) {
		return PodDNSName(m, pod.Name), true
	}
	return pod.Status.PodIP, false
}

// TLSNames are the names the servers' certificate holds: each pod under
// the headless Service, the client Services, and localhost, each Service
// name also in its short and cluster.local forms.
func TLSNames(m *databasev1.MySQL) []string {
	var names []string
	for i := range InstanceCount(m) {
		dns := PodDNSName(m, PodName(m, i))
		names = append(names, dns, dns+".cluster.local")
	}
	for _, s := range []string{ServiceName(m), PrimaryServiceName(m), ReplicasServiceName(m)} {
		qualified := s + "." + m.Namespace
		names = append(names, s, qualified, qualified+".svc", qualified+".svc.cluster.local")
	}
	return append(names, "localhost", "127.0.0.1")
}

// tlsSettings are the my.cnf settings of TLS.
func tlsSettings(m *databasev1.MySQL) []setting {
	if !tlsOn(m) {
		return nil
	}
	s := []setting{{"ssl_ca", TLSCAPath}, {"ssl_cert", TLSMountPath + "/" + certs.CertKey}, {"ssl_key", TLSMountPath + "/" + certs.KeyKey}}
	if databasev1.TLSModeOf(m) == databasev1.TLSRequired {
		s = append(s, setting{"require_secure_transport", "ON"})
	}
	return s
}

// tlsVolumes are the pod's TLS volume, if any.
func tlsVolumes(m *databasev1.MySQL) []*corev1ac.VolumeApplyConfiguration {
	if !tlsOn(m) {
		return nil
	}
	return []*corev1ac.VolumeApplyConfiguration{corev1ac.Volume().WithName(tlsVolume).
		WithSecret(corev1ac.SecretVolumeSource().WithSecretName(TLSSecretName(m)).WithDefaultMode(0o440))}
}

// tlsMounts are a container's mounts of the TLS volume, if any.
func tlsMounts(m *databasev1.MySQL) []*corev1ac.VolumeMountApplyConfiguration {
	if !tlsOn(m) {
		return nil
	}
	return []*corev1ac.VolumeMountApplyConfiguration{mount(tlsVolume, TLSMountPath, true)}
}

// TLSSecret returns the apply configuration of the servers' certificate
// Secret, of type kubernetes.io/tls with the CA beside.
func TLSSecret(m *databasev1.MySQL, server certs.KeyPair, ca []byte) *corev1ac.SecretApplyConfiguration {
	return tlsSecret(m, TLSSecretName(m), map[string][]byte{certs.CertKey: server.Cert, certs.KeyKey: server.Key, certs.CAKey: ca})
}

// CopiedTLSSecret returns the apply configuration of the servers'
// certificate Secret copied from tls.secretName's data, marked with the
// source's version ("<uid>/<resourceVersion>").
func CopiedTLSSecret(m *databasev1.MySQL, data map[string][]byte, version string) *corev1ac.SecretApplyConfiguration {
	return tlsSecret(m, TLSSecretName(m), map[string][]byte{certs.CertKey: data[certs.CertKey], certs.KeyKey: data[certs.KeyKey],
		certs.CAKey: data[certs.CAKey]}).WithAnnotations(map[string]string{vocabulary.AnnotationTLSSource: version})
}

// TLSSourceSecret is the Secret the servers' certificate is copied from:
// tls.secretName, or the Secret of cert-manager's Certificate; empty when
// the operator issues it.
func TLSSourceSecret(m *databasev1.MySQL) string {
	switch {
	case m.Spec.TLS == nil:
		return ""
	case m.Spec.TLS.CertManager != nil:
		return CertManagerSecretName(m)
	}
	return m.Spec.TLS.SecretName
}

// CASecret returns the apply configuration of the CA's Secret: data as a
// rotation leaves it, and the last AnnotationRotateCA value acted on.
func CASecret(m *databasev1.MySQL, data map[string][]byte, handled string) *corev1ac.SecretApplyConfiguration {
	s := tlsSecret(m, CASecretName(m), data)
	if handled != "" {
		s.WithAnnotations(map[string]string{vocabulary.AnnotationRotateCA: handled})
	}
	return s
}

func tlsSecret(m *databasev1.MySQL, name string, data map[string][]byte) *corev1ac.SecretApplyConfiguration {
	return corev1ac.Secret(name, m.Namespace).
		WithLabels(childLabels(m)).
		WithOwnerReferences(ownerRef(m)).
		WithType(corev1.SecretTypeTLS).
		WithData(data)
}

// WithTLS returns cred with the TLS of pod's server: verified against ca
// for the pod's name under the headless Service, and required when the
// MySQL requires it. A pod made before TLS was turned on (without the
// certificate), or no ca (TLS disabled, or its Secret not made yet),
// leaves cred in clear: the roll-out that turns TLS on must still reach
// the servers it restarts.
func WithTLS(m *databasev1.MySQL, cred dbop.Credentials, ca []byte, pod *corev1.Pod) dbop.Credentials {
	if len(ca) > 0 && ServesTLS(pod) {
		cred.TLS = dbop.ServerTLS{CA: string(ca), ServerName: PodDNSName(m, pod.Name),
			Required: databasev1.TLSModeOf(m) == databasev1.TLSRequired}
	}
	return cred
}

// ServesTLS says pod was made with the servers' certificate mounted (the
// cache keeps a pod's annotations, not its spec).
func ServesTLS(pod *corev1.Pod) bool {
	return pod.Annotations[vocabulary.AnnotationTLS] == tlsAnnotationOn
}

// tlsAnnotationOn is AnnotationTLS's value on pods with the certificate.
const tlsAnnotationOn = "on"

// podAnnotations are the pod template's annotations: the config hash,
// and whether the pods mount the certificate.
func podAnnotations(m *databasev1.MySQL) map[string]string {
	a := map[string]string{vocabulary.AnnotationConfigHash: ConfigHash(m)}
	if tlsOn(m) {
		a[vocabulary.AnnotationTLS] = tlsAnnotationOn
	}
	return a
}

// AgentEndpoint is the address of pod's agent API, and the TLS config to
// reach it: while the pod serves TLS, its mutual-TLS port, the
// certificate of the servers' Secret data presented as the client's and
// the agent's verified against its CA for the pod's name; else the plain
// port and a nil config.
func AgentEndpoint(m *databasev1.MySQL, pod *corev1.Pod, secret map[string][]byte) (string, *tls.Config, error) {
	if !ServesTLS(pod) {
		return net.JoinHostPort(pod.Status.PodIP, strconv.Itoa(AgentPort)), nil, nil
	}
	pair, err := tls.X509KeyPair(secret[certs.CertKey], secret[certs.KeyKey])
	if err != nil {
		return "", nil, fmt.Errorf("the certificate of Secret %s: %w", TLSSecretName(m), err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(secret[certs.CAKey]) {
		return "", nil, fmt.Errorf("Secret %s has no CA", TLSSecretName(m))
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{pair}, RootCAs: roots,
		ServerName: PodDNSName(m, pod.Name)}
	return net.JoinHostPort(pod.Status.PodIP, strconv.Itoa(AgentTLSPort)), cfg, nil
}
