package dbop

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/example/mysql-operator/certs"
	"github.com/example/mysql-operator/internal/dbtest"
)

// tlsFiles writes a key pair and its CA where the servers read them.
func tlsFiles(t *testing.T, dir string, pair certs.KeyPair, ca []byte) {
	t.Helper()
	for name, b := range map[string][]byte{certs.CertKey: pair.Cert, certs.KeyKey: pair.Key, certs.CAKey: ca} {
		// Written beside and renamed, as the kubelet swaps a Secret's files.
		tmp := filepath.Join(dir, "."+name)
		if err := os.WriteFile(tmp, b, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
}

// sessionValue reads one row of a SHOW ... LIKE statement's value.
func sessionValue(t *testing.T, db *sql.DB, show string) string {
	t.Helper()
	var name, value string
	if err := db.QueryRow(show).Scan(&name, &value); err != nil {
		t.Fatalf("%s: %v", show, err)
	}
	return value
}

// replicaField reads one column of SHOW REPLICA STATUS.
func replicaField(t *testing.T, db *sql.DB, column string) string {
	t.Helper()
	st, err := dbtest.ReplicaStatus(db)
	if err != nil {
		t.Fatal(err)
	}
	v, ok := st[column]
	if !ok {
		t.Fatalf("SHOW REPLICA STATUS has no column %s (or no row)", column)
	}
	return v
}

// TestTLSMariaDB runs two real MariaDB servers that require TLS with a
// certificate from certs: the operator's connections verify it (and refuse
// another CA's or another name's), plain clients are refused, replication
// goes over TLS checked against the CA, and a new certificate reloaded
// with ReloadTLS reaches new connections while the old ones go on.
func TestTLSMariaDB(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	ca, err := certs.NewCA("test CA", time.Now(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	first, err := certs.Issue(ca, []string{"localhost", "127.0.0.1"}, time.Now(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	tlsFiles(t, dir, first, ca.Cert)
	boot, err := MariaDB.Bootstrap(testPasswords)
	if err != nil {
		t.Fatal(err)
	}
	servers := dbtest.Start(t, 2, dbtest.Config{Bootstrap: boot, ExtraConfig: []string{"ssl_ca=" + filepath.Join(dir, certs.CAKey),
		"ssl_cert=" + filepath.Join(dir, certs.CertKey), "ssl_key=" + filepath.Join(dir, certs.KeyKey), "require_secure_transport=ON"}})
	verified := adminCred
	verified.TLS = ServerTLS{CA: string(ca.Cert), ServerName: "localhost", Required: true}
	pool := NewPool(Options{})
	t.Cleanup(func() { _ = pool.Close() })
	primary, err := pool.Get(servers[0].Addr(), verified)
	if err != nil {
		t.Fatal(err)
	}
	replica, err := pool.Get(servers[1].Addr(), verified)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := primary.Status(ctx); err != nil {
		t.Fatalf("a verified TLS connection: %v", err)
	}
	if c := sessionValue(t, primary.db, "SHOW SESSION STATUS LIKE 'Ssl_cipher'"); c == "" {
		t.Fatal("the operator's session has no TLS cipher")
	}

	t.Run("refused", func(t *testing.T) {
		other, err := certs.NewCA("another CA", time.Now(), time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		for name, cred := range map[string]Credentials{
			"in clear":        adminCred,
			"another CA":      {User: AdminUser, Password: adminCred.Password, TLS: ServerTLS{CA: string(other.Cert), ServerName: "localhost"}},
			"another name":    {User: AdminUser, Password: adminCred.Password, TLS: ServerTLS{CA: string(ca.Cert), ServerName: "db-9.example"}},
			"not PEM as a CA": {User: AdminUser, Password: adminCred.Password, TLS: ServerTLS{CA: "junk", ServerName: "localhost"}},
		} {
			in, err := Open(servers[0].Addr(), cred, Options{})
			if err == nil {
				_, err = in.Status(ctx)
				_ = in.Close()
			}
			if err == nil {
				t.Errorf("%s: connected", name)
			}
			t.Logf("%s: %v", name, err)
		}
	})

	t.Run("an account that requires a certificate's subject", func(t *testing.T) {
		spec := UserSpec{Name: "app", Host: "%", Password: "app-pw-1", RequireSubject: "/CN=app"}
		if err := primary.CreateUser(ctx, spec); err != nil {
			t.Fatal(err)
		}
		info, ok, err := primary.User(ctx, "app", "%")
		if err != nil || !ok || info.RequireSubject != "/CN=app" {
			t.Fatalf("User = %+v, %t, %v; want the subject /CN=app", info, ok, err)
		}
		login := func(names ...string) error {
			return loginWithClientCert(ctx, servers[0].Addr(), "app", "app-pw-1", ca, names)
		}
		if err := login("app"); err != nil {
			t.Errorf("with a certificate of CN=app: %v", err)
		}
		for what, names := range map[string][]string{"no certificate": nil, "CN=other": {"other"}} {
			if err := login(names...); err == nil {
				t.Errorf("with %s: logged in", what)
			}
		}
	})

	t.Run("replication over TLS", func(t *testing.T) {
		if err := primary.SetWritable(ctx); err != nil {
			t.Fatal(err)
		}
		// A source whose certificate another CA signed is refused.
		otherDir := t.TempDir()
		other, err := certs.NewCA("another CA", time.Now(), time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		tlsFiles(t, otherDir, first, other.Cert)
		refused(t, replica, Source{Host: "127.0.0.1", Port: servers[0].Port, User: ReplUser, Password: testPasswords.ReplPassword,
			SSL: true, SSLCA: filepath.Join(otherDir, certs.CAKey)}, "another CA")
		// A source whose certificate does not name the host it is reached
		// at is refused too: the host name is verified, not only the chain.
		unnamed, err := certs.Issue(ca, []string{"localhost"}, time.Now(), time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		// Only the source reloads it (the replica's own certificate plays
		// no part in its receiver's connection).
		tlsFiles(t, dir, unnamed, ca.Cert)
		if err := primary.ReloadTLS(ctx); err != nil {
			t.Fatal(err)
		}
		refused(t, replica, Source{Host: "127.0.0.1", Port: servers[0].Port, User: ReplUser, Password: testPasswords.ReplPassword,
			SSL: true, SSLCA: filepath.Join(dir, certs.CAKey), VerifyHost: true}, "a certificate for localhost only, reached at 127.0.0.1")
		tlsFiles(t, dir, first, ca.Cert)
		if err := primary.ReloadTLS(ctx); err != nil {
			t.Fatal(err)
		}
		src := Source{Host: "127.0.0.1", Port: servers[0].Port, User: ReplUser, Password: testPasswords.ReplPassword,
			SSL: true, SSLCA: filepath.Join(dir, certs.CAKey), VerifyHost: true}
		if err := replica.ConfigureReplica(ctx, src, false); err != nil {
			t.Fatal(err)
		}
		if err := replica.StartReplica(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := primary.db.ExecContext(ctx, "CREATE DATABASE app"); err != nil {
			t.Fatal(err)
		}
		eventually(t, 20*time.Second, "the database replicated", func() error {
			_, ok, err := replica.Database(ctx, "app")
			if err == nil && !ok {
				err = os.ErrNotExist
			}
			return err
		})
		if got := replicaField(t, replica.db, "Master_SSL_Allowed"); got != "Yes" {
			t.Errorf("Master_SSL_Allowed = %q", got)
		}
		if got := replicaField(t, replica.db, "Master_SSL_CA_File"); got != src.SSLCA {
			t.Errorf("Master_SSL_CA_File = %q", got)
		}
		if got := replicaField(t, replica.db, "Master_SSL_Verify_Server_Cert"); got != "Yes" {
			t.Errorf("Master_SSL_Verify_Server_Cert = %q", got)
		}
	})

	t.Run("reloaded", func(t *testing.T) {
		before := sessionValue(t, primary.db, "SHOW STATUS LIKE 'Ssl_server_not_after'")
		second, err := certs.Issue(ca, []string{"localhost"}, time.Now(), 2*time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		tlsFiles(t, dir, second, ca.Cert)
		gtid := func(in *Instance) string {
			st, err := in.Status(ctx)
			if err != nil {
				t.Fatal(err)
			}
			return st.GTIDBinlogState
		}
		was := gtid(replica)
		for _, in := range []*Instance{primary, replica} {
			if err := in.ReloadTLS(ctx); err != nil {
				t.Fatal(err)
			}
		}
		if now := gtid(replica); now != was {
			t.Errorf("the reload wrote a transaction on the replica: its binary log went from %q to %q", was, now)
		}
		fresh, err := Open(servers[0].Addr(), verified, Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer fresh.Close()
		leaf, _ := certs.Leaf(second.Cert)
		after := sessionValue(t, fresh.db, "SHOW STATUS LIKE 'Ssl_server_not_after'")
		if after == before || !parseCertificateTime(after).Equal(leaf.NotAfter) {
			t.Errorf("a new connection's certificate expires %q (was %q), want the new one's %s", after, before, leaf.NotAfter)
		}
		if _, err := primary.Status(ctx); err != nil {
			t.Errorf("the established connection after the reload: %v", err)
		}
		// MariaDB reports the certificate of the session's own handshake:
		// a new session's status says the new one (hence Pool.Renew).
		if st, err := fresh.Status(ctx); err != nil {
			t.Error(err)
		} else if !st.CertificateNotAfter.Equal(leaf.NotAfter) {
			t.Errorf("a new session's status says the certificate expires %s, want %s", st.CertificateNotAfter, leaf.NotAfter)
		}
		if got := replicaField(t, replica.db, "Slave_IO_Running"); got != "Yes" {
			t.Errorf("the replica's receiver after the reload: %s", got)
		}
	})
}

// refused points replica at src and waits until its receiver reports an
// error: the source's certificate is refused (what for says why it should be).
func refused(t *testing.T, replica *Instance, src Source, what string) {
	t.Helper()
	ctx := context.Background()
	if err := replica.ConfigureReplica(ctx, src, false); err != nil {
		t.Fatal(err)
	}
	if err := replica.StartReplica(ctx); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, "the receiver refuses the source with "+what, func() error {
		if e := replicaField(t, replica.db, "Last_IO_Error"); !strings.Contains(e, "SSL") {
			return fmt.Errorf("Last_IO_Error = %q, want an SSL error", e)
		}
		return nil
	})
	t.Logf("with %s: %s", what, replicaField(t, replica.db, "Last_IO_Error"))
	if err := replica.StopReplica(ctx); err != nil {
		t.Fatal(err)
	}
}

// loginWithClientCert logs in to addr as user over TLS verified against
// the CA, presenting, when names are given, a client certificate the CA
// issued for them (the first is its CN).
func loginWithClientCert(ctx context.Context, addr, user, password string, ca certs.KeyPair, names []string) error {
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(ca.Cert)
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr = user, password, "tcp", addr
	cfg.TLS = &tls.Config{RootCAs: roots, ServerName: "localhost", MinVersion: tls.VersionTLS12}
	if len(names) > 0 {
		pair, err := certs.Issue(ca, names, time.Now(), time.Hour)
		if err != nil {
			return err
		}
		cert, err := tls.X509KeyPair(pair.Cert, pair.Key)
		if err != nil {
			return err
		}
		cfg.TLS.Certificates = []tls.Certificate{cert}
	}
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return err
	}
	db := sql.OpenDB(conn)
	defer db.Close()
	return db.PingContext(ctx)
}
