package e2e

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"maps"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/certs"
	"github.com/example/mysql-operator/controller/vocabulary"
	"github.com/example/mysql-operator/internal/testenv"
	"github.com/example/mysql-operator/internal/workload"
)

// TestTLSCARotation rotates the operator's CA of a running two-instance
// MySQL under a writer whose client trusts what <name>-tls's ca.crt holds
// at each new connection (as a client that mounts the Secret does): both
// steps are seen, no write is refused, no container restarts, and at the
// end the servers, the replica's replication and new clients all work with
// the new CA alone.
func TestTLSCARotation(t *testing.T) {
	ctx := context.Background()
	ns := testenv.NewNamespace(t, c.Client)
	createMySQL(t, ns, "db", 2)
	waitCurrent(t, key(ns, "db"))
	oldCA := secretData(t, ns, "db-ca")[certs.CertKey]
	restarts := containerRestarts(t, ns, "db-0", "db-1")
	db := tlsOpenWith(t, "Service db-primary", clusterIP(t, ns, "db-primary"), rootPasswordOf(t, ns, "db"),
		followingCA(t, ns, "db-primary."+ns+".svc"))
	w, err := workload.StartWriter(db)
	if err != nil {
		t.Fatal(err)
	}
	env, since := &writer{w}, time.Now()

	kubectl(t, "annotate", "-n", ns, "my/db", vocabulary.AnnotationRotateCA+"=test")
	steps, asked := map[databasev1.CARotationStep]time.Duration{}, time.Now()
	err = wait.PollUntilContextTimeout(ctx, time.Second, 10*time.Minute, true, func(context.Context) (bool, error) {
		m := getMySQL(t, ns, "db")
		if m.Status.TLS == nil {
			return false, nil
		}
		if _, seen := steps[m.Status.TLS.CARotation]; !seen {
			steps[m.Status.TLS.CARotation] = time.Since(asked).Round(time.Second)
		}
		return m.Status.TLS.CARotation == "" && !bytes.Equal(secretData(t, ns, "db-ca")[certs.CertKey], oldCA), nil
	})
	_, trust := steps[databasev1.CARotationTrust]
	if _, sign := steps[databasev1.CARotationSign]; err != nil || !trust || !sign {
		t.Fatalf("the rotation: %v; steps seen after %v", err, steps)
	}
	t.Logf("steps seen after %v; rotated in %s", steps, time.Since(asked).Round(time.Second))
	newCA := secretData(t, ns, "db-ca")[certs.CertKey]
	if got := secretData(t, ns, "db-tls")[certs.CAKey]; !bytes.Equal(got, newCA) {
		t.Errorf("db-tls's ca.crt after the rotation is not the new CA alone (%d bytes)", len(got))
	}
	only := x509.NewCertPool()
	only.AppendCertsFromPEM(newCA)
	for _, pod := range []string{"db-0", "db-1"} {
		tlsPodDB(t, ns, pod, only) // waits until the pod presents a certificate the new CA signed
	}
	waitCurrent(t, key(ns, "db"))
	replica := adminDB(t, ns, "db", "db-1")
	if getMySQL(t, ns, "db").Status.CurrentPrimary == "db-1" {
		replica = adminDB(t, ns, "db", "db-0")
	}
	for _, q := range []string{"STOP REPLICA IO_THREAD", "START REPLICA IO_THREAD"} {
		if _, err := replica.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, "the replica connected again over TLS", func(context.Context) (bool, error) {
		return replicaStatus(t, replica, "Master_SSL_Allowed") == "Yes" && replicaStatus(t, replica, "Slave_IO_Running") == "Yes", nil
	})
	env.finish(t, ns, "db", since)
	if _, refused, last := env.outage(); refused > 0 {
		t.Errorf("%d writes refused across the CA rotation, the last: %v", refused, last)
	}
	if after := containerRestarts(t, ns, "db-0", "db-1"); !maps.Equal(after, restarts) {
		t.Errorf("restarts by pod and uid %v before, %v after the rotation", restarts, after)
	}
}

// followingCA is the TLS config of a client that verifies serverName
// against the CAs <db>-tls's ca.crt holds when each connection begins.
func followingCA(t *testing.T, ns, serverName string) *tls.Config {
	return &tls.Config{MinVersion: tls.VersionTLS12, ServerName: serverName, InsecureSkipVerify: true,
		VerifyConnection: func(cs tls.ConnectionState) error {
			s := &corev1.Secret{}
			if err := c.Client.Get(context.Background(), key(ns, "db-tls"), s); err != nil {
				return err
			}
			roots := x509.NewCertPool()
			if len(cs.PeerCertificates) == 0 || !roots.AppendCertsFromPEM(s.Data[certs.CAKey]) {
				return errors.New("no certificate to verify")
			}
			inter := x509.NewCertPool()
			for _, c := range cs.PeerCertificates[1:] {
				inter.AddCert(c)
			}
			_, err := cs.PeerCertificates[0].Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter, DNSName: serverName})
			return err
		}}
}

// secretData is the data of Secret name.
func secretData(t *testing.T, ns, name string) map[string][]byte {
	t.Helper()
	s := &corev1.Secret{}
	if err := c.Client.Get(context.Background(), key(ns, name), s); err != nil {
		t.Fatal(err)
	}
	return s.Data
}
