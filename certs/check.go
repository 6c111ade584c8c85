package certs

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"time"
)

// Check says what is wrong with the key pair and CA in a TLS Secret's
// data for a server known by names at now, in words that name the key at
// fault; nil when nothing is. The CA (ca.crt) must have signed the
// certificate, since the clients verify it against that CA.
func Check(data map[string][]byte, names []string, now time.Time) error {
	for _, k := range []string{CertKey, KeyKey, CAKey} {
		if len(data[k]) == 0 {
			return fmt.Errorf("has no key %q", k)
		}
	}
	leaf, err := Leaf(data[CertKey])
	if err != nil {
		return fmt.Errorf("%s: %w", CertKey, err)
	}
	if _, err := tls.X509KeyPair(data[CertKey], data[KeyKey]); err != nil {
		return fmt.Errorf("%s does not match %s: %w", CertKey, KeyKey, err)
	}
	switch {
	case now.Before(leaf.NotBefore):
		return fmt.Errorf("%s is not valid before %s", CertKey, leaf.NotBefore.UTC().Format(time.RFC3339))
	case now.After(leaf.NotAfter):
		return fmt.Errorf("%s expired at %s", CertKey, leaf.NotAfter.UTC().Format(time.RFC3339))
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(data[CAKey]) {
		return fmt.Errorf("%s holds no PEM certificate", CAKey)
	}
	opts := x509.VerifyOptions{Roots: roots, CurrentTime: now, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	if _, err := leaf.Verify(opts); err != nil {
		return fmt.Errorf("%s is not signed by a CA of %s: %w", CertKey, CAKey, err)
	}
	for _, n := range names {
		if err := leaf.VerifyHostname(n); err != nil {
			return fmt.Errorf("%s does not name %s", CertKey, n)
		}
	}
	return nil
}

// Usable says what is wrong with a CA's key pair at now: a certificate
// that is not a CA's, does not match its key, or is not valid at now.
func Usable(ca KeyPair, now time.Time) error {
	c, err := ca.parse()
	if err != nil {
		return fmt.Errorf("%s does not match %s: %w", CertKey, KeyKey, err)
	}
	switch leaf := c.Leaf; {
	case !leaf.IsCA:
		return fmt.Errorf("%s is not a CA's certificate", CertKey)
	case now.Before(leaf.NotBefore) || now.After(leaf.NotAfter):
		return fmt.Errorf("%s is valid from %s to %s only", CertKey,
			leaf.NotBefore.UTC().Format(time.RFC3339), leaf.NotAfter.UTC().Format(time.RFC3339))
	}
	return nil
}
