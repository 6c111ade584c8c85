package mysql

import (
	"bytes"
	"context"
	"crypto/x509"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/applyset"
	"github.com/example/mysql-operator/certs"
	"github.com/example/mysql-operator/controller/children"
	"github.com/example/mysql-operator/controller/outcome"
	"github.com/example/mysql-operator/controller/vocabulary"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The servers' certificates: the MySQL's own CA, made once into
// <name>-ca and never made again while its Secret exists (it is rotated in
// place, see carotation.go), signs the servers' certificate in <name>-tls,
// issued again when it is two thirds through its life, when it no longer
// names every pod and Service, or when the CA is not the one that signed
// it.

// tlsState is a MySQL's TLS as its Secrets hold it.
type tlsState struct {
	// members are the CA's and the certificate's Secrets to apply.
	members []applyset.Member
	// secret is the data of the servers' certificate Secret: the key pair
	// and the CA's certificate, which clients trust.
	secret map[string][]byte
	// status is what status.tls says.
	status *databasev1.TLSStatus
	// issued says a CA or a certificate was made, or copied, in this
	// reconcile.
	issued bool
	// expiring says when a certificate its owner renews is past two
	// thirds of its life; empty when it is not.
	expiring string
	// waiting says the certificate is not issued yet (cert-manager's);
	// the servers' pods wait for it.
	waiting string
}

// tlsSecrets returns the TLS of obj at now: the stored CA and certificate,
// or new ones where they are missing or due. Nil while TLS is disabled.
func (r *Reconciler) tlsSecrets(ctx context.Context, obj *databasev1.MySQL, now time.Time) (*tlsState, error) {
	if databasev1.TLSModeOf(obj) == databasev1.TLSDisabled {
		return nil, nil
	}
	if name := children.TLSSourceSecret(obj); name != "" {
		if err := r.applyCertificate(ctx, obj); err != nil {
			return nil, err
		}
		return r.broughtTLS(ctx, obj, name, now)
	}
	return r.operatorTLS(ctx, obj, now)
}

// operatorTLS returns the TLS of a MySQL whose certificates the operator
// issues: its CA moved a step on where a rotation is due (see rotateCA),
// and the servers' certificate issued again where it is not the current
// one (currentCertificate).
func (r *Reconciler) operatorTLS(ctx context.Context, obj *databasev1.MySQL, now time.Time) (*tlsState, error) {
	ca, caLeaf, madeCA, err := r.caOf(ctx, obj, now)
	if err != nil {
		return nil, err
	}
	stored, err := r.storedSecret(ctx, obj, children.TLSSecretName(obj))
	if err != nil {
		return nil, err
	}
	var data map[string][]byte
	if stored != nil {
		data = stored.Data
	}
	server := certs.KeyPair{Cert: data[certs.CertKey], Key: data[certs.KeyKey]}
	leaf, current := currentCertificate(data, ca, caLeaf, children.TLSNames(obj), now)
	ca, stepped, err := rotateCA(obj, ca, caLeaf, current && servedEverywhere(obj, leaf), now)
	if err != nil {
		return nil, err
	}
	if stepped {
		if caLeaf, err = certs.Leaf(ca.signer.Cert); err != nil {
			return nil, err
		}
		current = false
	}
	if !current {
		if server, leaf, err = issueServer(ca.signer, children.TLSNames(obj), leaf, now); err != nil {
			return nil, err
		}
	}
	st := &tlsState{
		members: []applyset.Member{applyset.Of[corev1.Secret](children.CASecret(obj, ca.data(), ca.handled)),
			applyset.Of[corev1.Secret](children.TLSSecret(obj, server, ca.trusted))},
		secret: map[string][]byte{certs.CertKey: server.Cert, certs.KeyKey: server.Key, certs.CAKey: ca.trusted},
		issued: madeCA || stepped || !current,
		status: tlsStatus(obj, vocabulary.TLSSourceOperator, leaf, caLeaf),
	}
	st.status.CARotation = ca.step()
	return st, nil
}

// currentCertificate returns the servers' certificate in data, parsed
// (nil if it cannot be), and whether it is current: signed by the CA's
// signer, with the CA's trusted certificates beside it, naming every pod
// and Service and not yet due for renewal.
func currentCertificate(data map[string][]byte, ca caSecret, caLeaf *x509.Certificate, names []string, now time.Time) (*x509.Certificate, bool) {
	leaf, err := certs.Leaf(data[certs.CertKey])
	if err != nil {
		return nil, false
	}
	current := certs.Check(data, names, now) == nil && bytes.Equal(data[certs.CAKey], ca.trusted) &&
		leaf.CheckSignatureFrom(caLeaf) == nil && now.Before(certs.RenewAt(leaf))
	return leaf, current
}

// issueServer issues the servers' certificate for names, signed by ca,
// and returns it parsed. Its expiry differs from that of the one it
// replaces, previous: the servers report the expiry of what they present,
// and a CA rotation moves on when they all present the new one.
func issueServer(ca certs.KeyPair, names []string, previous *x509.Certificate, now time.Time) (certs.KeyPair, *x509.Certificate, error) {
	if previous != nil && previous.NotAfter.Equal(now.Add(certs.ServerLife).Truncate(time.Second)) {
		now = now.Add(time.Second)
	}
	server, err := certs.Issue(ca, names, now, certs.ServerLife)
	if err != nil {
		return certs.KeyPair{}, nil, err
	}
	leaf, err := certs.Leaf(server.Cert)
	return server, leaf, err
}

// tlsStatus is status.tls of a certificate and its CA.
func tlsStatus(obj *databasev1.MySQL, source string, leaf, ca *x509.Certificate) *databasev1.TLSStatus {
	return &databasev1.TLSStatus{SecretName: children.TLSSecretName(obj), Source: source, NotAfter: metav1.NewTime(leaf.NotAfter),
		RenewAt: metav1.NewTime(certs.RenewAt(leaf)), CANotAfter: metav1.NewTime(ca.NotAfter)}
}

// caOf returns obj's CA Secret, and its signing certificate parsed: the
// stored one, or a new one when none is stored. A stored CA that cannot be
// read stalls the MySQL: replacing it would break every client that
// trusts it.
func (r *Reconciler) caOf(ctx context.Context, obj *databasev1.MySQL, now time.Time) (caSecret, *x509.Certificate, bool, error) {
	name := children.CASecretName(obj)
	stored, err := r.storedSecret(ctx, obj, name)
	if err != nil {
		return caSecret{}, nil, false, err
	}
	var ca caSecret
	if stored != nil {
		ca = readCASecret(stored.Data, stored.Annotations)
	} else if ca, err = newCASecret(obj, now); err != nil {
		return caSecret{}, nil, false, err
	}
	leaf, err := certs.Leaf(ca.signer.Cert)
	if err == nil {
		err = certs.Usable(ca.signer, now)
	}
	if err == nil && len(ca.next.Cert) > 0 {
		err = certs.Usable(ca.next, now)
	}
	if err != nil {
		return caSecret{}, nil, false, outcome.Stalled(vocabulary.ReasonSecretInvalid,
			"Secret %s: %v: delete it to have a new CA made, and give clients its ca.crt", name, err)
	}
	return ca, leaf, stored == nil, nil
}

// broughtTLS returns the TLS of a MySQL whose certificate is in a Secret
// of its owner's or of cert-manager's, name: while cert-manager has not
// written it, a wait; once there, copied into <name>-tls once it passes
// certs.Check, the copy marked with the source's uid and resourceVersion.
// The cache keeps no value of a Secret the operator does not own, so the
// source is read from the API server only when its resourceVersion is not
// the one copied. A source that does not pass (or a copy that no longer
// does: expired, or an instance it does not name) stalls the MySQL, and
// the servers keep the last good copy.
func (r *Reconciler) broughtTLS(ctx context.Context, obj *databasev1.MySQL, name string, now time.Time) (*tlsState, error) {
	field, source := "tls.secretName", vocabulary.TLSSourceSecret
	if obj.Spec.TLS.CertManager != nil {
		field, source = "tls.certManager", vocabulary.TLSSourceCertManager
	}
	src := &corev1.Secret{}
	switch err := r.Client.Get(ctx, client.ObjectKey{Namespace: obj.Namespace, Name: name}, src); {
	case apierrors.IsNotFound(err) && source == vocabulary.TLSSourceCertManager:
		return &tlsState{waiting: fmt.Sprintf("waiting for cert-manager to issue Certificate %s into Secret %s",
			children.CertificateName(obj), name)}, nil
	case apierrors.IsNotFound(err):
		return nil, outcome.Stalled(vocabulary.ReasonSecretNotFound, "%s: Secret %s not found in namespace %s", field, name, obj.Namespace)
	case err != nil:
		return nil, fmt.Errorf("get Secret %s: %w", name, err)
	}
	copied := &corev1.Secret{}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: obj.Namespace, Name: children.TLSSecretName(obj)}, copied)
	if err != nil && !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("get Secret %s: %w", children.TLSSecretName(obj), err)
	}
	version := string(src.UID) + "/" + src.ResourceVersion
	data, issued := copied.Data, false
	if copied.Annotations[vocabulary.AnnotationTLSSource] != version {
		if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: obj.Namespace, Name: name}, src); err != nil {
			return nil, fmt.Errorf("get Secret %s: %w", name, err)
		}
		data, issued, version = src.Data, true, string(src.UID)+"/"+src.ResourceVersion
	}
	if err := certs.Check(data, children.TLSNames(obj), now); err != nil {
		return nil, outcome.Stalled(vocabulary.ReasonSecretInvalid, "%s: Secret %s: %v; the servers keep their last good certificate", field, name, err)
	}
	leaf, _ := certs.Leaf(data[certs.CertKey]) // Check parsed it
	ca, err := certs.Leaf(data[certs.CAKey])
	if err != nil {
		return nil, outcome.Stalled(vocabulary.ReasonSecretInvalid, "%s: Secret %s: %s: %v", field, name, certs.CAKey, err)
	}
	st := &tlsState{issued: issued, secret: data, status: tlsStatus(obj, source, leaf, ca),
		members: []applyset.Member{applyset.Of[corev1.Secret](children.CopiedTLSSecret(obj, data, version))}}
	if !now.Before(certs.RenewAt(leaf)) {
		st.expiring = fmt.Sprintf("the certificate of Secret %s expires at %s: renew it", name, leaf.NotAfter.UTC().Format(time.RFC3339))
	}
	return st, nil
}
