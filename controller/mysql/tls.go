package mysql

import (
	"bytes"
	"context"
	"crypto/x509"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/applyset"
	"github.com/example/mysql-operator/certs"
	"github.com/example/mysql-operator/controller/children"
	"github.com/example/mysql-operator/controller/outcome"
	"github.com/example/mysql-operator/controller/vocabulary"
)

// The servers' certificates: the MySQL's own CA, made once into
// <name>-ca and never made again while its Secret exists, signs the
// servers' certificate in <name>-tls, issued again when it is two thirds
// through its life, when it no longer names every pod and Service, or
// when the CA is not the one that signed it.

// tlsState is a MySQL's TLS as its Secrets hold it.
type tlsState struct {
	// members are the CA's and the certificate's Secrets to apply.
	members []applyset.Member
	// secret is the data of the servers' certificate Secret: the key pair
	// and the CA's certificate, which clients trust.
	secret map[string][]byte
	// status is what status.tls says.
	status *databasev1.TLSStatus
	// issued says a CA or a certificate was made in this reconcile.
	issued bool
}

// tlsSecrets returns the TLS of obj at now: the stored CA and certificate,
// or new ones where they are missing or due. Nil while TLS is disabled.
func (r *Reconciler) tlsSecrets(ctx context.Context, obj *databasev1.MySQL, now time.Time) (*tlsState, error) {
	if databasev1.TLSModeOf(obj) == databasev1.TLSDisabled {
		return nil, nil
	}
	ca, caLeaf, madeCA, err := r.caOf(ctx, obj, now)
	if err != nil {
		return nil, err
	}
	stored, _, err := r.storedSecret(ctx, obj, children.TLSSecretName(obj))
	if err != nil {
		return nil, err
	}
	names := children.TLSNames(obj)
	server := certs.KeyPair{Cert: stored[certs.CertKey], Key: stored[certs.KeyKey]}
	issue := madeCA || !bytes.Equal(stored[certs.CAKey], ca.Cert) || certs.Check(stored, names, now) != nil
	var leaf *x509.Certificate
	if !issue {
		if leaf, err = certs.Leaf(server.Cert); err != nil || !now.Before(certs.RenewAt(leaf)) {
			issue = true
		}
	}
	if issue {
		if server, err = certs.Issue(ca, names, now, certs.ServerLife); err != nil {
			return nil, err
		}
		if leaf, err = certs.Leaf(server.Cert); err != nil {
			return nil, err
		}
	}
	return &tlsState{
		members: []applyset.Member{applyset.Of[corev1.Secret](children.CASecret(obj, ca)),
			applyset.Of[corev1.Secret](children.TLSSecret(obj, server, ca.Cert))},
		secret: map[string][]byte{certs.CertKey: server.Cert, certs.KeyKey: server.Key, certs.CAKey: ca.Cert},
		issued: madeCA || issue,
		status: &databasev1.TLSStatus{SecretName: children.TLSSecretName(obj), NotAfter: metav1.NewTime(leaf.NotAfter),
			RenewAt: metav1.NewTime(certs.RenewAt(leaf)), CANotAfter: metav1.NewTime(caLeaf.NotAfter)},
	}, nil
}

// caOf returns obj's CA, and its certificate parsed: the stored one, or a
// new one when none is stored. A stored CA that cannot be read stalls the
// MySQL: replacing it would break every client that trusts it.
func (r *Reconciler) caOf(ctx context.Context, obj *databasev1.MySQL, now time.Time) (certs.KeyPair, *x509.Certificate, bool, error) {
	name := children.CASecretName(obj)
	stored, found, err := r.storedSecret(ctx, obj, name)
	if err != nil {
		return certs.KeyPair{}, nil, false, err
	}
	ca, made := certs.KeyPair{Cert: stored[certs.CertKey], Key: stored[certs.KeyKey]}, false
	if !found {
		if ca, err = certs.NewCA(obj.Namespace+"/"+obj.Name+" CA", now, certs.CALife); err != nil {
			return certs.KeyPair{}, nil, false, err
		}
		made = true
	}
	leaf, err := certs.Leaf(ca.Cert)
	if err == nil {
		err = certs.Usable(ca, now)
	}
	if err != nil {
		return certs.KeyPair{}, nil, false, outcome.Stalled(vocabulary.ReasonSecretInvalid,
			"Secret %s: %v: delete it to have a new CA made, and give clients its ca.crt", name, err)
	}
	return ca, leaf, made, nil
}
