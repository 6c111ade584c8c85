package mysql

import (
	"bytes"
	"crypto/x509"
	"fmt"
	"time"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/certs"
	"github.com/example/mysql-operator/controller/vocabulary"
)

// The operator's CA is rotated in two steps, so that no server, replica,
// agent or client ever meets a certificate signed by a CA it does not
// trust yet. A rotation starts when the CA is two thirds through its life,
// or when the MySQL's AnnotationRotateCA takes a value not acted on yet:
//
//   - TrustNewCA: a new CA is made and trusted beside the old one (ca.crt
//     holds both); the servers' certificate, still signed by the old CA, is
//     issued again so that the servers can be seen loading it.
//   - SignWithNewCA, once every instance presents that certificate (and so
//     has read the ca.crt that came with it): the new CA signs, and the old
//     one is still trusted by whoever has not seen the new certificate yet.
//   - once every instance presents the certificate the new CA signed, the
//     old CA is trusted no more.
//
// Where it is is kept in the CA's Secret: nextCert/nextKey hold the new
// CA while it is only trusted; a ca.crt that is more than the signing
// CA's certificate means the old one is still trusted.

// Keys of the CA's Secret beside tls.crt, tls.key and ca.crt.
const (
	// nextCertKey holds the new CA's certificate while it is only trusted.
	nextCertKey = "next.crt"
	// nextKeyKey holds the new CA's key meanwhile.
	nextKeyKey = "next.key"
)

// caSecret is what a MySQL's CA Secret holds.
type caSecret struct {
	// signer signs the servers' certificates (tls.crt, tls.key).
	signer certs.KeyPair
	// trusted are the CAs that clients trust (ca.crt).
	trusted []byte
	// next is the CA that signs once the rotation's first step is done.
	next certs.KeyPair
	// handled is the last AnnotationRotateCA value acted on.
	handled string
}

// readCASecret reads a CA Secret's data and annotations.
func readCASecret(data map[string][]byte, annotations map[string]string) caSecret {
	return caSecret{signer: certs.KeyPair{Cert: data[certs.CertKey], Key: data[certs.KeyKey]}, trusted: data[certs.CAKey],
		next: certs.KeyPair{Cert: data[nextCertKey], Key: data[nextKeyKey]}, handled: annotations[vocabulary.AnnotationRotateCA]}
}

// data is the CA Secret's data.
func (c caSecret) data() map[string][]byte {
	d := map[string][]byte{certs.CertKey: c.signer.Cert, certs.KeyKey: c.signer.Key, certs.CAKey: c.trusted}
	if len(c.next.Cert) > 0 {
		d[nextCertKey], d[nextKeyKey] = c.next.Cert, c.next.Key
	}
	return d
}

// step is the rotation step c is at; "" when none is under way.
func (c caSecret) step() databasev1.CARotationStep {
	switch {
	case len(c.next.Cert) > 0:
		return databasev1.CARotationTrust
	case !bytes.Equal(c.trusted, c.signer.Cert):
		return databasev1.CARotationSign
	}
	return ""
}

// newCASecret is the CA Secret of a new CA, the request on obj counted as
// acted on: a new CA needs no rotation.
func newCASecret(obj *databasev1.MySQL, now time.Time) (caSecret, error) {
	ca, err := certs.NewCA(caName(obj, now), now, certs.CALife)
	if err != nil {
		return caSecret{}, err
	}
	return caSecret{signer: ca, trusted: ca.Cert, handled: obj.Annotations[vocabulary.AnnotationRotateCA]}, nil
}

// caName is the common name of obj's CA made at now: the MySQL's name and
// the time, so that an old and a new CA trusted together differ, within
// the 64 characters X.509 allows.
func caName(obj *databasev1.MySQL, now time.Time) string {
	at := " CA " + now.UTC().Format("20060102T150405Z")
	name := obj.Namespace + "/" + obj.Name
	if limit := 64 - len(at); len(name) > limit {
		name = name[:limit]
	}
	return name + at
}

// rotateCA returns c moved one step on, and whether it moved, given
// whether every instance presents the servers' certificate issued in c's
// current step (served), the rotation asked for on obj and the time.
func rotateCA(obj *databasev1.MySQL, c caSecret, signerLeaf *x509.Certificate, served bool, now time.Time) (caSecret, bool, error) {
	switch c.step() {
	case databasev1.CARotationTrust:
		if !served {
			return c, false, nil
		}
		return caSecret{signer: c.next, trusted: c.trusted, handled: c.handled}, true, nil
	case databasev1.CARotationSign:
		if !served {
			return c, false, nil
		}
		c.trusted = c.signer.Cert
		return c, true, nil
	}
	asked := obj.Annotations[vocabulary.AnnotationRotateCA]
	if asked == c.handled && now.Before(certs.RenewAt(signerLeaf)) {
		return c, false, nil
	}
	next, err := certs.NewCA(caName(obj, now), now, certs.CALife)
	if err != nil {
		return c, false, fmt.Errorf("make a new CA: %w", err)
	}
	trusted := append(append([]byte{}, c.signer.Cert...), next.Cert...)
	return caSecret{signer: c.signer, trusted: trusted, next: next, handled: asked}, true, nil
}

// servedEverywhere says whether every instance of obj, as its status last
// said, presents the certificate leaf.
func servedEverywhere(obj *databasev1.MySQL, leaf *x509.Certificate) bool {
	serving := 0
	for _, in := range obj.Status.Instances {
		if in.CertificateNotAfter != nil && in.CertificateNotAfter.Time.Equal(leaf.NotAfter) {
			serving++
		}
	}
	return serving >= int(obj.Spec.Replicas)
}
