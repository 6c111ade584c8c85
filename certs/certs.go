// Package certs issues and checks the TLS certificates of a MySQL's
// servers: the operator's own CA (ECDSA P-256), server certificates signed
// by it, when they are due for renewal, and what is wrong with a key pair
// a user brings. It is pure: time and randomness come from its callers'
// arguments and crypto/rand, and it imports only the standard library.
package certs

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"time"
)

// The keys of a TLS Secret, as kubernetes.io/tls and cert-manager name them.
const (
	// CertKey holds the certificate chain, PEM.
	CertKey = "tls.crt"
	// KeyKey holds the private key, PEM.
	KeyKey = "tls.key"
	// CAKey holds the certificates of the CAs to trust, PEM.
	CAKey = "ca.crt"
)

// Lifetimes of what the operator issues.
const (
	// CALife is how long the operator's CA is valid.
	CALife = 10 * 365 * 24 * time.Hour
	// ServerLife is how long a server certificate is valid.
	ServerLife = 90 * 24 * time.Hour
)

// maxCommonName is the longest common name X.509 allows (ub-common-name).
const maxCommonName = 64

// KeyPair is a certificate and its private key, both PEM.
type KeyPair struct {
	// Cert is the certificate, PEM.
	Cert []byte
	// Key is the private key, PEM (PKCS #8).
	Key []byte
}

// NewCA makes a self-signed CA valid from now for life.
func NewCA(name string, now time.Time, life time.Duration) (KeyPair, error) {
	tmpl := &x509.Certificate{
		Subject:               pkix.Name{CommonName: name},
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	return issue(tmpl, nil, now, life)
}

// Issue makes a certificate for names (DNS names or IP addresses), signed
// by ca and valid from now for life, usable by servers and clients alike
// (the agents' mutual TLS uses one certificate both ways).
func Issue(ca KeyPair, names []string, now time.Time, life time.Duration) (KeyPair, error) {
	parent, err := ca.parse()
	if err != nil {
		return KeyPair{}, fmt.Errorf("the CA: %w", err)
	}
	tmpl := &x509.Certificate{
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	if len(names) > 0 && len(names[0]) <= maxCommonName {
		// The subject's CN is the first name, where it fits; the SANs are
		// what clients verify.
		tmpl.Subject = pkix.Name{CommonName: names[0]}
	}
	for _, n := range names {
		if ip := net.ParseIP(n); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, n)
		}
	}
	return issue(tmpl, &parent, now, life)
}

// issue fills tmpl's serial and validity, makes its key and signs it with
// parent, or itself when parent is nil. The validity starts a minute before
// now, for clocks a little behind.
func issue(tmpl *x509.Certificate, parent *tls.Certificate, now time.Time, life time.Duration) (KeyPair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return KeyPair{}, fmt.Errorf("generate a key: %w", err)
	}
	if tmpl.SerialNumber, err = rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127)); err != nil {
		return KeyPair{}, fmt.Errorf("generate a serial number: %w", err)
	}
	tmpl.NotBefore, tmpl.NotAfter = now.Add(-time.Minute), now.Add(life)
	signer, signerCert := any(key), tmpl
	if parent != nil {
		signer, signerCert = parent.PrivateKey, parent.Leaf
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, signerCert, &key.PublicKey, signer)
	if err != nil {
		return KeyPair{}, fmt.Errorf("sign the certificate: %w", err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return KeyPair{}, fmt.Errorf("encode the key: %w", err)
	}
	return KeyPair{
		Cert: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		Key:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}),
	}, nil
}

// parse returns the key pair as crypto/tls holds it, its leaf parsed.
func (p KeyPair) parse() (tls.Certificate, error) {
	c, err := tls.X509KeyPair(p.Cert, p.Key)
	if err != nil {
		return tls.Certificate{}, err
	}
	return c, nil
}

// Leaf returns the first certificate of a PEM chain.
func Leaf(chain []byte) (*x509.Certificate, error) {
	block, _ := pem.Decode(chain)
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, errors.New("no PEM certificate")
	}
	c, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("parse the certificate: %w", err)
	}
	return c, nil
}

// RenewAt is when a certificate is due for renewal: two thirds into its life.
func RenewAt(c *x509.Certificate) time.Time {
	return c.NotBefore.Add(c.NotAfter.Sub(c.NotBefore) * 2 / 3)
}
