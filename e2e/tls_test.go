package e2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"maps"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/certs"
	"github.com/example/mysql-operator/internal/dbtest"
	"github.com/example/mysql-operator/internal/testenv"
	"github.com/example/mysql-operator/internal/workload"
)

// TestTLS runs a MySQL with the default TLS on the real node: a client
// through the client Service verifies the server against the CA in
// <name>-tls, the replicas replicate over TLS checked against it (chain
// and the source's name), status
// says when the certificate expires; a new certificate (an instance
// added) reaches new connections with no container restarted and no write
// refused; with Required, a client in clear is refused.
func TestTLS(t *testing.T) {
	ctx := context.Background()
	ns := testenv.NewNamespace(t, c.Client)
	m := createMySQL(t, ns, "db", 2)
	waitCurrent(t, key(ns, "db"))
	ca, leaf := serverCertificate(t, ns)
	db := tlsDB(t, ns, "db", "db."+ns+".svc", ca)
	if v := sessionStatus(t, db, "Ssl_version"); v == "" {
		t.Fatal("the session through the client Service is not encrypted")
	}
	m = getMySQL(t, ns, "db")
	if m.Status.TLS == nil || !m.Status.TLS.NotAfter.Time.Equal(leaf.NotAfter) {
		t.Errorf("status.tls = %+v, want notAfter %s", m.Status.TLS, leaf.NotAfter)
	}
	replica := adminDB(t, ns, "db", "db-1")
	eventually(t, "db-1 replicating over TLS", func(context.Context) (bool, error) {
		return replicaStatus(t, replica, "Master_SSL_Allowed") == "Yes" && replicaStatus(t, replica, "Slave_IO_Running") == "Yes", nil
	})
	if got := replicaStatus(t, replica, "Master_SSL_CA_File"); got != "/etc/mysql-operator/tls/ca.crt" {
		t.Errorf("db-1's Master_SSL_CA_File = %q", got)
	}
	// The source is reached by the name its certificate holds, and that
	// name is verified, not only the chain.
	if got := replicaStatus(t, replica, "Master_SSL_Verify_Server_Cert"); got != "Yes" {
		t.Errorf("db-1's Master_SSL_Verify_Server_Cert = %q", got)
	}
	if got, want := replicaStatus(t, replica, "Master_Host"), "db-0.db-headless."+ns+".svc"; got != want {
		t.Errorf("db-1's Master_Host = %q, want %q", got, want)
	}

	t.Run("a new certificate without a restart", func(t *testing.T) {
		restarts := containerRestarts(t, ns, "db-0", "db-1")
		w, err := workload.StartWriter(tlsDB(t, ns, "db", "db-primary."+ns+".svc", ca))
		if err != nil {
			t.Fatal(err)
		}
		since := time.Now()
		env := &writer{w}
		kubectl(t, "scale", "-n", ns, "my/db", "--replicas=3")
		var renewed *x509.Certificate
		eventually(t, "a certificate naming db-2", func(context.Context) (bool, error) {
			_, renewed = serverCertificate(t, ns)
			return renewed.VerifyHostname("db-2.db-headless."+ns+".svc") == nil, nil
		})
		want := renewed.NotAfter.UTC().Format("Jan _2 15:04:05 2006 GMT")
		db0 := tlsPodDB(t, ns, "db-0", ca)
		db0.SetMaxIdleConns(0) // every query a new session
		// The kubelet refreshes a Secret's volume at its pod's next sync
		// (every minute or so), the agent looks every 10 s.
		err = wait.PollUntilContextTimeout(ctx, time.Second, 3*time.Minute, true, func(context.Context) (bool, error) {
			return sessionStatus(t, db0, "Ssl_server_not_after") == want, nil
		})
		if err != nil {
			t.Fatalf("db-0's new sessions never saw the new certificate (expiring %s)", want)
		}
		waitCurrent(t, key(ns, "db"))
		env.finish(t, ns, "db", since)
		if _, refused, last := env.outage(); refused > 0 {
			t.Errorf("%d writes refused across the rotation, the last: %v", refused, last)
		}
		if after := containerRestarts(t, ns, "db-0", "db-1"); !maps.Equal(after, restarts) {
			t.Errorf("restarts by pod and uid %v before, %v after the rotation", restarts, after)
		}
	})

	t.Run("a user that requires TLS", func(t *testing.T) {
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "tls-user", Namespace: ns},
			StringData: map[string]string{"password": "only-over-tls-1"}}
		if err := c.Client.Create(ctx, secret); err != nil {
			t.Fatal(err)
		}
		u := &databasev1.MySQLUser{ObjectMeta: metav1.ObjectMeta{Name: "secure", Namespace: ns}, Spec: databasev1.MySQLUserSpec{
			MySQLRef: databasev1.MySQLReference{Name: "db"}, RequireTLS: true,
			PasswordSecretRef: databasev1.PasswordSecretReference{Name: "tls-user", Key: "password"}}}
		if err := c.Client.Create(ctx, u); err != nil {
			t.Fatal(err)
		}
		testenv.WaitKstatusOf(t, c.Client, "MySQLUser", key(ns, "secure"), status.CurrentStatus, timeout)
		db, err := workload.OpenTLS(clusterIP(t, ns, "db"), "secure", "only-over-tls-1",
			&tls.Config{RootCAs: ca, ServerName: "db." + ns + ".svc", MinVersion: tls.VersionTLS12})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if err := db.PingContext(ctx); err != nil {
			t.Errorf("the user over TLS: %v", err)
		}
		plain, err := workload.Open(clusterIP(t, ns, "db"), "secure", "only-over-tls-1")
		if err != nil {
			t.Fatal(err)
		}
		defer plain.Close()
		if err := plain.PingContext(ctx); err == nil {
			t.Error("the user that requires TLS logged in in clear")
		}
	})

	t.Run("required", func(t *testing.T) {
		m := getMySQL(t, ns, "db")
		m.Spec.TLS = &databasev1.TLSSpec{Mode: databasev1.TLSRequired}
		if err := c.Client.Update(ctx, m); err != nil {
			t.Fatal(err)
		}
		eventually(t, "the MySQL at the new generation", func(ctx context.Context) (bool, error) {
			m := getMySQL(t, ns, "db")
			return m.Status.ObservedGeneration == m.Generation, nil
		})
		waitCurrent(t, key(ns, "db"))
		if v := show(t, tlsDB(t, ns, "db", "db."+ns+".svc", ca), "SHOW GLOBAL VARIABLES LIKE ?", "require_secure_transport"); v != "ON" {
			t.Fatalf("require_secure_transport = %q", v)
		}
		plain, err := workload.Open(clusterIP(t, ns, "db"), "root", rootPasswordOf(t, ns, "db"))
		if err != nil {
			t.Fatal(err)
		}
		defer plain.Close()
		if err := plain.PingContext(ctx); err == nil {
			t.Fatal("a client in clear logged in with TLS required")
		} else {
			t.Logf("a client in clear: %v", err)
		}
	})
}

// serverCertificate returns the CA pool and the certificate of <db>-tls.
func serverCertificate(t *testing.T, ns string) (*x509.CertPool, *x509.Certificate) {
	t.Helper()
	s := &corev1.Secret{}
	if err := c.Client.Get(context.Background(), key(ns, "db-tls"), s); err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(s.Data[certs.CAKey]) {
		t.Fatal("db-tls has no CA")
	}
	leaf, err := certs.Leaf(s.Data[certs.CertKey])
	if err != nil {
		t.Fatal(err)
	}
	return pool, leaf
}

// tlsDB opens a pool as root through service over TLS, verifying the
// server's certificate for serverName against ca.
func tlsDB(t *testing.T, ns, name, serverName string, ca *x509.CertPool) *sql.DB {
	t.Helper()
	service := serverName[:len(serverName)-len("."+ns+".svc")]
	return tlsOpen(t, "Service "+service, clusterIP(t, ns, service), serverName, rootPasswordOf(t, ns, name), ca)
}

// tlsPodDB opens a pool as root to one pod over TLS, verifying its name
// under the headless Service.
func tlsPodDB(t *testing.T, ns, pod string, ca *x509.CertPool) *sql.DB {
	t.Helper()
	p := &corev1.Pod{}
	if err := c.Client.Get(context.Background(), key(ns, pod), p); err != nil {
		t.Fatal(err)
	}
	return tlsOpen(t, "pod "+pod, p.Status.PodIP, pod+".db-headless."+ns+".svc", rootPasswordOf(t, ns, "db"), ca)
}

// tlsOpen opens a pool as root to ip over verified TLS and waits until a
// query goes through.
func tlsOpen(t *testing.T, what, ip, serverName, password string, ca *x509.CertPool) *sql.DB {
	t.Helper()
	return tlsOpenWith(t, what, ip, password, &tls.Config{RootCAs: ca, ServerName: serverName, MinVersion: tls.VersionTLS12})
}

// tlsOpenWith opens a pool as root to ip over TLS configured by cfg and
// waits until a query goes through.
func tlsOpenWith(t *testing.T, what, ip, password string, cfg *tls.Config) *sql.DB {
	t.Helper()
	db, err := workload.OpenTLS(ip, "root", password, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	var last error
	if err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		last = db.PingContext(ctx)
		return last == nil, nil
	}); err != nil {
		t.Fatalf("a TLS login to %s: %v; the last try: %v", what, err, last)
	}
	return db
}

// clusterIP is the ClusterIP of service.
func clusterIP(t *testing.T, ns, service string) string {
	t.Helper()
	svc := &corev1.Service{}
	if err := c.Client.Get(context.Background(), key(ns, service), svc); err != nil {
		t.Fatal(err)
	}
	return svc.Spec.ClusterIP
}

// sessionStatus reads a status variable of db's session.
func sessionStatus(t *testing.T, db *sql.DB, name string) string {
	t.Helper()
	return show(t, db, "SHOW SESSION STATUS LIKE ?", name)
}

// replicaStatus reads one column of SHOW REPLICA STATUS through db; empty
// when the server is no replica.
func replicaStatus(t *testing.T, db *sql.DB, column string) string {
	t.Helper()
	st, err := dbtest.ReplicaStatus(db)
	if err != nil {
		t.Fatal(err)
	}
	return st[column]
}

// containerRestarts sums the restarts of every container of the pods
// named, failing if one was replaced.
func containerRestarts(t *testing.T, ns string, pods ...string) map[string]int32 {
	t.Helper()
	n := map[string]int32{}
	for _, name := range pods {
		p := &corev1.Pod{}
		if err := c.Client.Get(context.Background(), key(ns, name), p); err != nil {
			t.Fatal(err)
		}
		n[name+" "+string(p.UID)] = 0
		for _, s := range p.Status.ContainerStatuses {
			n[name+" "+string(p.UID)] += s.RestartCount
		}
	}
	return n
}

// TestTLSTurnedOn turns TLS on for a running three-instance MySQL made
// without it, under a writer: the pods roll with their certificate, no
// acknowledged write is lost, and every replica ends up replicating over
// TLS (those configured in clear during the roll are configured again).
func TestTLSTurnedOn(t *testing.T) {
	ctx := context.Background()
	ns := testenv.NewNamespace(t, c.Client)
	m := &databasev1.MySQL{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: ns}, Spec: realNodeSpec(3)}
	m.Spec.TLS = &databasev1.TLSSpec{Mode: databasev1.TLSDisabled}
	if err := c.Client.Create(ctx, m); err != nil {
		t.Fatal(err)
	}
	waitCurrent(t, key(ns, "db"))
	w := startWriter(t, ns, "db")
	since := time.Now()
	m = getMySQL(t, ns, "db")
	m.Spec.TLS = &databasev1.TLSSpec{Mode: databasev1.TLSEnabled}
	if err := c.Client.Update(ctx, m); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the MySQL at the new generation", func(ctx context.Context) (bool, error) {
		m := getMySQL(t, ns, "db")
		return m.Status.ObservedGeneration == m.Generation, nil
	})
	waitCurrent(t, key(ns, "db"))
	primary := getMySQL(t, ns, "db").Status.CurrentPrimary
	for _, pod := range []string{"db-0", "db-1", "db-2"} {
		if pod == primary {
			continue
		}
		db := adminDB(t, ns, "db", pod)
		eventually(t, pod+" replicating over TLS", func(context.Context) (bool, error) {
			return replicaStatus(t, db, "Master_SSL_Allowed") == "Yes" && replicaStatus(t, db, "Slave_IO_Running") == "Yes", nil
		})
	}
	w.finish(t, ns, "db", since)
}
