package agent

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/example/mysql-operator/certs"
)

// writeTLSDir writes a key pair and CA into a new directory, as the
// Secret volume holds them.
func writeTLSDir(t *testing.T, pair certs.KeyPair, ca []byte) string {
	t.Helper()
	dir := t.TempDir()
	for name, b := range map[string][]byte{certs.CertKey: pair.Cert, certs.KeyKey: pair.Key, certs.CAKey: ca} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestAPIMutualTLS serves the API's TLS config: a client with a
// certificate of the MySQL's CA is served, one without a certificate or
// with another CA's is refused at the handshake; a certificate renewed in
// the directory is served to the next client.
func TestAPIMutualTLS(t *testing.T) {
	now := time.Now()
	ca, err := certs.NewCA("db CA", now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	other, err := certs.NewCA("another CA", now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	issue := func(ca certs.KeyPair, life time.Duration) certs.KeyPair {
		p, err := certs.Issue(ca, []string{"db-0.db-headless.ns.svc"}, now, life)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	server := Config{TLSDir: writeTLSDir(t, issue(ca, time.Hour), ca.Cert)}
	l, err := tls.Listen("tcp", "127.0.0.1:0", server.serverTLS())
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })

	get := func(cfg *tls.Config) (*http.Response, error) {
		c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg, DisableKeepAlives: true}}
		return c.Get("https://" + l.Addr().String() + "/")
	}
	peer := Config{TLSDir: writeTLSDir(t, issue(ca, time.Hour), ca.Cert)}
	good, err := peer.clientTLS("db-0.db-headless.ns.svc")
	if err != nil {
		t.Fatal(err)
	}
	resp, err := get(good)
	if err != nil {
		t.Fatalf("a client of the CA: %v", err)
	}
	first := resp.TLS.PeerCertificates[0].SerialNumber
	resp.Body.Close()

	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(ca.Cert)
	noCert := &tls.Config{RootCAs: roots, ServerName: "db-0.db-headless.ns.svc"}
	foreign, err := Config{TLSDir: writeTLSDir(t, issue(other, time.Hour), other.Cert)}.clientTLS("db-0.db-headless.ns.svc")
	if err != nil {
		t.Fatal(err)
	}
	foreign.RootCAs = roots // it trusts the server; the server must not trust it
	// Sent even though the server asks for its own CA's certificates.
	foreign.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &foreign.Certificates[0], nil }
	for name, cfg := range map[string]*tls.Config{"no certificate": noCert, "another CA's": foreign} {
		if resp, err := get(cfg); err == nil {
			resp.Body.Close()
			t.Errorf("a client with %s certificate was served", name)
		} else {
			t.Logf("%s: %v", name, err)
		}
	}

	renewed := issue(ca, 2*time.Hour)
	for name, b := range map[string][]byte{certs.CertKey: renewed.Cert, certs.KeyKey: renewed.Key} {
		if err := os.WriteFile(filepath.Join(server.TLSDir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	resp, err = get(good)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.TLS.PeerCertificates[0].SerialNumber.Cmp(first) == 0 {
		t.Error("the renewed certificate was not served")
	}
}
