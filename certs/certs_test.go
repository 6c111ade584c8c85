package certs

import (
	"crypto/tls"
	"crypto/x509"
	"strings"
	"testing"
	"time"
)

var now = time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)

func mustCA(t *testing.T) KeyPair {
	t.Helper()
	ca, err := NewCA("test CA", now, CALife)
	if err != nil {
		t.Fatal(err)
	}
	return ca
}

func mustIssue(t *testing.T, ca KeyPair, names ...string) KeyPair {
	t.Helper()
	p, err := Issue(ca, names, now, ServerLife)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func secret(p KeyPair, ca []byte) map[string][]byte {
	return map[string][]byte{CertKey: p.Cert, KeyKey: p.Key, CAKey: ca}
}

// TestIssued: a certificate the CA issued verifies against it for each of
// its names, by TLS's own rules, as a server and as a client.
func TestIssued(t *testing.T) {
	ca := mustCA(t)
	names := []string{"db-0.db-headless.ns.svc", "db-primary.ns.svc", "localhost", "127.0.0.1"}
	p := mustIssue(t, ca, names...)
	if err := Check(secret(p, ca.Cert), names, now); err != nil {
		t.Fatalf("Check: %v", err)
	}
	leaf, err := Leaf(p.Cert)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(ca.Cert)
	for _, usage := range []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth} {
		if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, CurrentTime: now, KeyUsages: []x509.ExtKeyUsage{usage}}); err != nil {
			t.Errorf("verify for %v: %v", usage, err)
		}
	}
	if _, err := tls.X509KeyPair(p.Cert, p.Key); err != nil {
		t.Errorf("crypto/tls cannot load the pair: %v", err)
	}
	if got, want := RenewAt(leaf), now.Add(-time.Minute).Add((ServerLife+time.Minute)*2/3); !got.Equal(want) {
		t.Errorf("RenewAt = %s, want %s", got, want)
	}
}

// TestCheckSaysWhat: each fault of a Secret is named.
func TestCheckSaysWhat(t *testing.T) {
	ca, other := mustCA(t), mustCA(t)
	good := mustIssue(t, ca, "db-0.db-headless.ns.svc")
	foreign := mustIssue(t, other, "db-0.db-headless.ns.svc")
	old, err := Issue(ca, []string{"db-0.db-headless.ns.svc"}, now.Add(-100*24*time.Hour), ServerLife)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		data  map[string][]byte
		names []string
		at    time.Time
		want  string
	}{
		{"no key", map[string][]byte{CertKey: good.Cert, CAKey: ca.Cert}, nil, now, `has no key "tls.key"`},
		{"no ca", map[string][]byte{CertKey: good.Cert, KeyKey: good.Key}, nil, now, `has no key "ca.crt"`},
		{"not pem", secret(KeyPair{Cert: []byte("junk"), Key: good.Key}, ca.Cert), nil, now, "tls.crt: no PEM certificate"},
		{"key of another", secret(KeyPair{Cert: good.Cert, Key: foreign.Key}, ca.Cert), nil, now, "tls.crt does not match tls.key"},
		{"expired", secret(old, ca.Cert), nil, now, "tls.crt expired at 2026-11-26T12:00:00Z"},
		{"not yet", secret(good, ca.Cert), nil, now.Add(-time.Hour), "tls.crt is not valid before 2026-12-06T11:59:00Z"},
		{"other CA", secret(foreign, ca.Cert), nil, now, "tls.crt is not signed by a CA of ca.crt"},
		{"ca junk", secret(good, []byte("junk")), nil, now, "ca.crt holds no PEM certificate"},
		{"name", secret(good, ca.Cert), []string{"db-1.db-headless.ns.svc"}, now, "tls.crt does not name db-1.db-headless.ns.svc"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Check(tc.data, tc.names, tc.at)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Check = %v, want it to say %q", err, tc.want)
			}
		})
	}
}
