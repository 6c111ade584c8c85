package dbop

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/example/mysql-operator/internal/golden"
)

// goldenSource is the example replication source of the golden files.
var goldenSource = Source{Host: "orders-0.orders.db.svc", Port: 3306, User: ReplUser, Password: "repl-pw",
	SSL: true, SSLCA: "/etc/mysql-operator/tls/ca.crt", VerifyHost: true}

// goldenBootstrap has passwords with characters that need quoting.
var goldenBootstrap = BootstrapConfig{RootPassword: `r00t'pw\x`, AdminPassword: "adm;in\npw",
	ReplPassword: "repl-pw", AgentPassword: "ag%ent_pw"}

// goldenSecrets are the example passwords, shown as <secret> in statements marked
// Secret (a password that appears unmasked means the statement lacks the mark).
var goldenSecrets = map[string]bool{"repl-pw": true, "adm-pw": true, "app-pw": true}

// renderStmts writes one named group of statements: SQL, then its arguments
// (secrets shown as <secret>).
func renderStmts(b *strings.Builder, name string, ss []Stmt, err error) {
	fmt.Fprintf(b, "-- %s\n", name)
	if err != nil {
		fmt.Fprintf(b, "-- error: %v\n\n", err)
		return
	}
	for _, s := range ss {
		b.WriteString(s.SQL + ";\n")
		if len(s.Args) == 0 {
			continue
		}
		args := make([]string, len(s.Args))
		for i, a := range s.Args {
			args[i] = fmt.Sprintf("%#v", a)
		}
		if s.Secret {
			for i, a := range s.Args {
				if str, ok := a.(string); ok && goldenSecrets[str] {
					args[i] = "<secret>"
				}
			}
		}
		fmt.Fprintf(b, "--   args: %s\n", strings.Join(args, ", "))
	}
	b.WriteString("\n")
}

// goldenStatements renders every statement of d with fixed example arguments.
func goldenStatements(d Dialect) string {
	var b strings.Builder
	fmt.Fprintf(&b, "-- %s dialect: every statement, rendered by golden_test.go (go test ./dbop -run Golden -update)\n\n", d.Engine())
	one := func(name string, ss []Stmt) { renderStmts(&b, name, ss, nil) }
	fmt.Fprintf(&b, "-- Status (one COM_QUERY)\n%s;\n\n", d.StatusQuery())
	one("SetReadOnly", d.SetReadOnly())
	one("SetWritable", d.SetWritable())
	ss, err := d.ChangeSource(goldenSource)
	renderStmts(&b, "ChangeSource", ss, err)
	one("StartReplica", d.StartReplica())
	one("StopReplica", d.StopReplica())
	one("StopIOThread", d.StopIOThread())
	one("ResetReplica", d.ResetReplica())
	one("WaitForGTID", []Stmt{d.WaitForGTID(goldenGTIDs(d), 30*time.Second)})
	ss, err = d.EnableSemiSyncSource(2)
	renderStmts(&b, "EnableSemiSyncSource(2)", ss, err)
	one("DisableSemiSyncSource", d.DisableSemiSyncSource())
	one("EnableSemiSyncReplica", d.EnableSemiSyncReplica())
	one("DisableSemiSyncReplica", d.DisableSemiSyncReplica())
	ss, err = d.SetGTIDSlavePos("0-1-100,1-2-5")
	renderStmts(&b, "SetGTIDSlavePos", ss, err)
	ss, err = d.SetGTIDBinlogState("0-1-100,0-2-50,1-2-5")
	renderStmts(&b, "SetGTIDBinlogState", ss, err)
	ss, err = d.CloneFrom(Source{Host: "orders-1.orders.db.svc", Port: 3306, User: AdminUser, Password: "adm-pw"})
	renderStmts(&b, "CloneFrom", ss, err)
	one("ResetBinlogs", d.ResetBinlogs())
	one("Shutdown", d.Shutdown())
	one("ReloadTLS", d.ReloadTLS())
	one("ListConnections", []Stmt{d.ListConnections()})
	one("KillConnection", []Stmt{d.KillConnection(42)})
	one("Heartbeat", heartbeat())
	one("BinaryLogs", stmts(listBinaryLogs))
	one("BinaryLogDir", stmts(binlogBasename))
	one("RotateBinaryLog", stmts(rotateBinaryLog))
	one("Counters", stmts(countersQuery))
	goldenGitOps(&b, d)
	return b.String()
}

// goldenGTIDs is an example wait target in the dialect's format.
func goldenGTIDs(d Dialect) string {
	if d.Engine() == EngineMariaDB {
		return "0-1-100"
	}
	return "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-100"
}

func TestGolden(t *testing.T) {
	for _, d := range []Dialect{MySQL, MariaDB} {
		name := strings.ToLower(d.Engine().String())
		checkGolden(t, filepath.Join("testdata", name+".sql"), goldenStatements(d))
		boot, err := d.Bootstrap(goldenBootstrap)
		if err != nil {
			t.Fatalf("%s bootstrap: %v", name, err)
		}
		checkGolden(t, filepath.Join("testdata", "bootstrap-"+name+".sql"), boot)
		accounts, err := d.RestoreAccounts(goldenBootstrap)
		if err != nil {
			t.Fatalf("%s restore accounts: %v", name, err)
		}
		checkGolden(t, filepath.Join("testdata", "restore-accounts-"+name+".sql"), accounts)
	}
}

// checkGolden compares got with the file, or rewrites it with -update.
func checkGolden(t *testing.T, path, got string) {
	t.Helper()
	golden.Check(t, path, got, "go test ./dbop -run Golden")
}

func TestBootstrapRejectsBadPasswords(t *testing.T) {
	for _, d := range []Dialect{MySQL, MariaDB} {
		cfg := goldenBootstrap
		cfg.ReplPassword = ""
		if _, err := d.Bootstrap(cfg); err == nil {
			t.Errorf("%s: empty password accepted", d.Engine())
		}
		cfg = goldenBootstrap
		cfg.AgentPassword = "secret\x00"
		if _, err := d.Bootstrap(cfg); err == nil || strings.Contains(err.Error(), "secret") {
			t.Errorf("%s: NUL password: %v", d.Engine(), err)
		}
	}
}

// goldenGitOps renders the GitOps statements with names that need quoting.
func goldenGitOps(b *strings.Builder, d Dialect) {
	db := DatabaseSpec{Name: "shop`s_db%", CharacterSet: "utf8mb4", Collation: "utf8mb4_unicode_ci"}
	ss, err := createDatabase(db)
	renderStmts(b, "CreateDatabase", ss, err)
	ss, err = alterDatabase(DatabaseSpec{Name: "shop`s_db%", Collation: "utf8mb4_bin"})
	renderStmts(b, "AlterDatabase", ss, err)
	ss, err = dropDatabase("shop`s_db%")
	renderStmts(b, "DropDatabase", ss, err)
	renderStmts(b, "Database", []Stmt{databaseInfoQuery("shop`s_db%")}, nil)
	u := UserSpec{Name: "o'app", Host: "10.0.%", Password: "app-pw", MaxUserConnections: 20, RequireSSL: true}
	ss, err = userStmt("CREATE", u, true)
	renderStmts(b, "CreateUser", ss, err)
	u.RequireSSL, u.MaxUserConnections = false, 0
	ss, err = userStmt("ALTER", u, true)
	renderStmts(b, "AlterUser (password)", ss, err)
	ss, err = userStmt("ALTER", u, false)
	renderStmts(b, "AlterUser (attributes)", ss, err)
	u.RequireSubject = "/CN=o'app/O=shop"
	ss, err = userStmt("ALTER", u, false)
	renderStmts(b, "AlterUser (X.509 subject)", ss, err)
	renderStmts(b, "DropUser", []Stmt{stmt("DROP USER IF EXISTS ?@?", "o'app", "10.0.%")}, nil)
	renderStmts(b, "User", []Stmt{userInfoQuery("o'app", "10.0.%")}, nil)
	renderStmts(b, "Grants", []Stmt{stmt("SHOW GRANTS FOR ?@?", "o'app", "10.0.%")}, nil)
	g := Grant{Database: "shop`s_db%", Table: "*", Privileges: []string{"select", "Insert", "ALL"}, GrantOption: true}
	ss, err = grantStmts(d, "GRANT", "o'app", "10.0.%", g)
	renderStmts(b, "GrantPrivileges (database)", ss, err)
	ss, err = grantStmts(d, "GRANT", "o'app", "10.0.%", Grant{Database: "shop", Table: "or`ders", Privileges: []string{"SELECT"}})
	renderStmts(b, "GrantPrivileges (table)", ss, err)
	ss, err = grantStmts(d, "REVOKE", "o'app", "10.0.%", g)
	renderStmts(b, "RevokePrivileges", ss, err)
	ss, err = grantStmts(d, "GRANT", "o'app", "%", Grant{Database: "*", Table: "*", Privileges: []string{"DELETE HISTORY"}})
	renderStmts(b, "GrantPrivileges (DELETE HISTORY)", ss, err)
}
