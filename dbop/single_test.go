package dbop

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestBootstrapMariaDB initialises a data directory with mariadb-install-db
// --extra-file=<Bootstrap> and checks the accounts it leaves.
func TestBootstrapMariaDB(t *testing.T) {
	e := startEnv(t, 1)
	t.Run("logins", func(t *testing.T) { bootLogins(t, e) })
	t.Run("accounts", func(t *testing.T) { bootAccounts(t, e) })
	t.Run("no GTID and read-only", func(t *testing.T) { bootNoGTIDAndReadOnly(t, e) })
	t.Run("quoted literals and identifiers read back", func(t *testing.T) { bootQuotedText(t, e) })
	t.Run("agent privileges", func(t *testing.T) { bootAgentPrivileges(t, e) })
}

// bootLogins is a subtest of TestBootstrapMariaDB: logins.
func bootLogins(t *testing.T, e *env) {
	ctx, s := context.Background(), e.servers[0]
	for _, c := range []struct{ addr, user, pw string }{
		{s.Addr(), "root", testPasswords.RootPassword},
		{s.Addr(), AdminUser, testPasswords.AdminPassword},
		{s.Socket, "root", testPasswords.RootPassword},
		{s.Socket, AgentUser, testPasswords.AgentPassword},
	} {
		if err := rawDB(t, c.addr, c.user, c.pw).PingContext(ctx); err != nil {
			t.Errorf("%s on %s: %v", c.user, c.addr, err)
		}
	}
	for _, c := range []struct{ addr, user, pw string }{
		{s.Addr(), "root", ""},                               // no password
		{s.Addr(), AgentUser, testPasswords.AgentPassword},   // agent is local only
		{s.Addr(), ReplUser, testPasswords.AdminPassword},    // wrong password
		{s.Addr(), "", ""},                                   // anonymous
		{s.Addr(), "nobody", ""},                             // anonymous match
		{s.Socket, "root", testPasswords.RootPassword + "x"}, // wrong password
	} {
		if err := rawDB(t, c.addr, c.user, c.pw).PingContext(ctx); mysqlErrno(err) != 1045 {
			t.Errorf("%q on %s: want access denied (1045), got %v", c.user, c.addr, err)
		}
	}
}

// bootAccounts is a subtest of TestBootstrapMariaDB: accounts.
func bootAccounts(t *testing.T, e *env) {
	ctx := context.Background()
	rows, err := e.root(0).QueryContext(ctx, "SELECT CONCAT(User, '@', Host) FROM mysql.global_priv ORDER BY 1")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = rows.Close() }()
	var got []string
	for rows.Next() {
		var a string
		if err := rows.Scan(&a); err != nil {
			t.Fatal(err)
		}
		got = append(got, a)
	}
	want := []string{"PUBLIC@", "mariadb.sys@localhost", AdminUser + "@%", AgentUser + "@localhost",
		ReplUser + "@%", "root@%", "root@localhost"}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("accounts = %v, want %v", got, want)
	}
	var dbs int
	if err := e.root(0).QueryRow("SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = 'test'").Scan(&dbs); err != nil || dbs != 0 {
		t.Errorf("test database: %d, %v", dbs, err)
	}
}

// bootNoGTIDAndReadOnly is a subtest of TestBootstrapMariaDB: no GTID and read-only.
func bootNoGTIDAndReadOnly(t *testing.T, e *env) {
	ctx := context.Background()
	st, err := e.ins[0].Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if empty, err := st.Empty(); err != nil || !empty {
		t.Errorf("bootstrap created GTIDs: binlog state %q, slave pos %q", st.GTIDBinlogState, st.GTIDSlavePos)
	}
	if !st.ReadOnly || st.Replica != nil || st.Version.Engine != EngineMariaDB || st.ServerID != 1 {
		t.Errorf("status = %+v", st)
	}
	_, err = e.root(0).ExecContext(ctx, "CREATE DATABASE rootwrite")
	if mysqlErrno(err) != 1290 {
		t.Errorf("root@'%%' wrote on a read_only instance: %v", err)
	}
}

// bootQuotedText is a subtest of TestBootstrapMariaDB: quoted literals and identifiers read back.
func bootQuotedText(t *testing.T, e *env) {
	ctx := context.Background()
	root := e.root(0)
	for _, seed := range quoteSeeds {
		lit, err := QuoteString(seed)
		if err != nil {
			continue // NUL, invalid UTF-8: rejected, as the fuzz test checks
		}
		var got string
		if err := root.QueryRowContext(ctx, "SELECT CONVERT("+lit+" USING utf8mb4)").Scan(&got); err != nil || got != seed {
			t.Errorf("SELECT %s = %q, %v; want %q", lit, got, err, seed)
		}
		id, err := QuoteIdentifier(seed)
		if err != nil || strings.TrimSpace(seed) != seed {
			continue // trailing spaces are not allowed in column aliases' names either
		}
		var col string
		rows, err := root.QueryContext(ctx, "SELECT 1 AS "+id)
		if err != nil {
			t.Errorf("SELECT 1 AS %s: %v", id, err)
			continue
		}
		cols, _ := rows.Columns()
		_ = rows.Close()
		if len(cols) == 1 {
			col = cols[0]
		}
		if col != seed {
			t.Errorf("column alias %s read back as %q, want %q", id, col, seed)
		}
	}
}

// bootAgentPrivileges is a subtest of TestBootstrapMariaDB: agent privileges.
func bootAgentPrivileges(t *testing.T, e *env) {
	ctx, s := context.Background(), e.servers[0]
	agent := rawDB(t, s.Socket, AgentUser, testPasswords.AgentPassword)
	for _, q := range []string{"SHOW REPLICA STATUS", "SHOW BINLOG STATUS", "SHOW PROCESSLIST", "FLUSH TABLES"} {
		if _, err := agent.ExecContext(ctx, q); err != nil {
			t.Errorf("agent %s: %v", q, err)
		}
	}
	if _, err := agent.ExecContext(ctx, "SET GLOBAL read_only = OFF"); err == nil {
		t.Error("agent could change read_only")
	}
}

// TestSecretsNotEchoed checks that a server error for a statement carrying a
// password does not reach the caller with the password (MariaDB error 1470 quotes
// the beginning of a too-long MASTER_PASSWORD).
func TestSecretsNotEchoed(t *testing.T) {
	e := startEnv(t, 1)
	ctx := context.Background()
	secret := "S3cr3tPassw0rd-" + strings.Repeat("x", 200)
	src := Source{Host: "127.0.0.1", Port: 3306, User: ReplUser, Password: secret}
	err := e.ins[0].ConfigureReplica(ctx, src, false)
	if err == nil {
		t.Fatal("a 215-character MASTER_PASSWORD was accepted")
	}
	if mysqlErrno(err) != 1470 {
		t.Errorf("want error 1470 (string too long), got %v", err)
	}
	if strings.Contains(err.Error(), "S3cr3t") || strings.Contains(err.Error(), "xxxxxxxx") {
		t.Errorf("error echoes the password: %v", err)
	}
	if !strings.Contains(err.Error(), "change replication source on "+e.servers[0].Addr()) {
		t.Errorf("error does not name the operation and address: %v", err)
	}
	if strings.Contains(err.Error(), "CHANGE MASTER") {
		t.Errorf("error contains the statement: %v", err)
	}
	// The same statement through a plain connection does echo it: the check above
	// is meaningful.
	_, raw := e.root(0).ExecContext(ctx, "CHANGE MASTER TO MASTER_PASSWORD = ?", secret)
	if raw == nil || !strings.Contains(raw.Error(), "S3cr3t") {
		t.Errorf("expected the raw server error to echo the password, got %v", raw)
	}
	u := UserSpec{Name: "u", Host: "%", Password: secret}
	if err := e.ins[0].CreateUser(ctx, u); err != nil {
		t.Fatal(err)
	}
	err = e.ins[0].CreateUser(ctx, u)
	if mysqlErrno(err) != 1396 || strings.Contains(err.Error(), "S3cr3t") {
		t.Errorf("create an existing user: want 1396 without the password, got %v", err)
	}
}

// TestStatusOneRoundTrip counts the packets Status sends once the dialect is
// known, and the connections the dialer counts open: one, then none after Close.
func TestStatusOneRoundTrip(t *testing.T) {
	e := startEnv(t, 1)
	ctx := context.Background()
	packets := prometheus.NewCounter(prometheus.CounterOpts{Name: "packets"})
	open := prometheus.NewGauge(prometheus.GaugeOpts{Name: "open"})
	in, err := Open(e.servers[0].Addr(), adminCred, Options{Dial: CountingDialer(packets, open)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := in.Status(ctx); err != nil { // detects the dialect and connects
		_ = in.Close()
		t.Fatal(err)
	}
	defer func() {
		_ = in.Close()
		if n := testutil.ToFloat64(open); n != 0 {
			t.Errorf("%v connections counted open after Close, want 0", n)
		}
	}()
	if n := testutil.ToFloat64(open); n != 1 {
		t.Errorf("%v connections counted open after one Status, want 1", n)
	}
	for range 3 {
		before := testutil.ToFloat64(packets)
		st, err := in.Status(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n := testutil.ToFloat64(packets) - before; n != 1 {
			t.Errorf("Status sent %v packets, want 1", n)
		}
		if st.SemiSync.TimeoutMillis == 0 || st.Version.Major != 10 {
			t.Errorf("status incomplete: %+v", st)
		}
	}
}

// TestPool checks reuse, credential change and Forget.
func TestPool(t *testing.T) {
	e := startEnv(t, 1)
	ctx := context.Background()
	addr := e.servers[0].Addr()
	p := NewPool(Options{})
	defer func() { _ = p.Close() }()
	a, _ := p.Get(addr, adminCred)
	b, _ := p.Get(addr, adminCred)
	if a != b || p.Len() != 1 {
		t.Fatal("same address and credentials gave two instances")
	}
	if _, err := a.Status(ctx); err != nil {
		t.Fatal(err)
	}
	c, _ := p.Get(addr, Credentials{User: "root", Password: testPasswords.RootPassword})
	if c == a || p.Len() != 1 {
		t.Fatal("new credentials did not replace the instance")
	}
	if _, err := a.Status(ctx); err == nil {
		t.Error("replaced instance still usable")
	}
	p.Renew(addr)
	renewed, _ := p.Get(addr, c.cred)
	if renewed == c || p.Len() != 1 {
		t.Fatal("a renewed instance was not replaced")
	} else if again, _ := p.Get(addr, c.cred); again != renewed {
		t.Fatal("the new instance was replaced again")
	}
	if _, err := c.Status(ctx); err == nil {
		t.Error("the instance renewed still usable")
	}
	if err := p.Forget(addr); err != nil || p.Len() != 0 {
		t.Fatalf("forget: %v, %d left", err, p.Len())
	}
	if _, err := renewed.Status(ctx); err == nil {
		t.Error("forgotten instance still usable")
	}
	wrong, _ := p.Get(addr, Credentials{User: AdminUser, Password: "wrong"})
	if _, err := wrong.Status(ctx); mysqlErrno(err) != 1045 || strings.Contains(err.Error(), "wrong") {
		t.Errorf("wrong password: %v", err)
	}
}

// TestKillConnections kills a client's running query but keeps the operator's.
func TestKillConnections(t *testing.T) {
	e := startEnv(t, 1)
	ctx := context.Background()
	in := e.ins[0]
	if err := in.CreateUser(ctx, UserSpec{Name: "app", Host: "%", Password: "app-pw"}); err != nil {
		t.Fatal(err)
	}
	app := rawDB(t, e.servers[0].Addr(), "app", "app-pw")
	done := make(chan error, 1)
	go func() {
		_, err := app.ExecContext(ctx, "SELECT SLEEP(60)")
		done <- err
	}()
	eventually(t, 10*time.Second, "app query running", func() error {
		conns, err := in.Connections(ctx)
		for _, c := range conns {
			if c.User == "app" && c.Command == "Query" {
				return nil
			}
		}
		return errors.Join(err, errors.New("no running app query"))
	})
	repl := rawDB(t, e.servers[0].Addr(), AdminUser, testPasswords.AdminPassword)
	if err := repl.PingContext(ctx); err != nil {
		t.Fatal(err)
	}
	n, err := in.KillConnections(ctx)
	if err != nil || n != 1 {
		t.Fatalf("KillConnections = %d, %v; want 1", n, err)
	}
	select {
	case err := <-done:
		if err == nil {
			t.Error("killed query returned no error")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("query not killed")
	}
	if err := repl.PingContext(ctx); err != nil {
		t.Errorf("operator connection killed: %v", err)
	}
}
