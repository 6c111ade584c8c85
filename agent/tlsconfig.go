package agent

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"path/filepath"
)

// The agents' API over mutual TLS: with Config.TLSDir set, the agent
// serves its API (seeds, backups, the archive, restore, crash) on
// Config.TLSListen to clients holding a certificate of the MySQL's CA (the
// operator, and the other agents, which present the servers' certificate),
// and the kubelet's probes stay on Config.Listen in clear. The files are
// read at each handshake, so a renewed certificate is used at once.

// loadTLS reads the key pair and the CA of dir.
func loadTLS(dir string) (tls.Certificate, *x509.CertPool, error) {
	pair, err := tls.LoadX509KeyPair(filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key"))
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("load the certificate of %s: %w", dir, err)
	}
	ca, err := os.ReadFile(filepath.Join(dir, "ca.crt"))
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("load the CA of %s: %w", dir, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return tls.Certificate{}, nil, fmt.Errorf("%s/ca.crt holds no PEM certificate", dir)
	}
	return pair, pool, nil
}

// serverTLS is the API's TLS config: a client certificate the CA signed
// is required.
func (c Config) serverTLS() *tls.Config {
	return &tls.Config{MinVersion: tls.VersionTLS12, GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
		pair, pool, err := loadTLS(c.TLSDir)
		if err != nil {
			return nil, err
		}
		return &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{pair},
			ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool}, nil
	}}
}

// clientTLS is the TLS config of a request to another agent, known by
// serverName: the pod's certificate as the client's, the other's verified
// against the CA.
func (c Config) clientTLS(serverName string) (*tls.Config, error) {
	pair, pool, err := loadTLS(c.TLSDir)
	if err != nil {
		return nil, err
	}
	return &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{pair}, RootCAs: pool, ServerName: serverName}, nil
}
