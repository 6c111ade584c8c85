package dbop

import (
	"context"
	"database/sql"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// awkward are names with quotes, backticks, wildcards, backslashes, comment and
// statement separators, placeholders and non-ASCII text.
var awkward = []string{"o'brien", "back`tick", "100%_db", `back\slash`, "ünïcødé-日本語", "semi;colon -- x", "a?b"}

// TestGitOpsMariaDB manages databases, users and grants with awkward names on a
// real server.
func TestGitOpsMariaDB(t *testing.T) {
	e := startEnv(t, 1)
	ctx := context.Background()
	in := e.ins[0]
	if err := in.Promote(ctx, 0); err != nil {
		t.Fatal(err)
	}
	t.Run("databases", func(t *testing.T) { testDatabases(t, e) })
	t.Run("users", func(t *testing.T) { testUsers(t, e) })
	t.Run("grants", func(t *testing.T) { testGrants(t, e) })
}

func testDatabases(t *testing.T, e *env) {
	ctx, in := context.Background(), e.ins[0]
	for _, name := range awkward {
		spec := DatabaseSpec{Name: name, CharacterSet: "utf8mb4", Collation: "utf8mb4_unicode_ci"}
		for range 2 { // idempotent
			if err := in.CreateDatabase(ctx, spec); err != nil {
				t.Fatalf("create %q: %v", name, err)
			}
		}
		if info, ok, err := in.Database(ctx, name); err != nil || !ok || info != (DatabaseInfo{"utf8mb4", "utf8mb4_unicode_ci"}) {
			t.Errorf("database %q = %+v, %v, %v", name, info, ok, err)
		}
		if err := in.AlterDatabase(ctx, DatabaseSpec{Name: name, Collation: "utf8mb4_bin"}); err != nil {
			t.Errorf("alter %q: %v", name, err)
		}
		if info, _, _ := in.Database(ctx, name); info.Collation != "utf8mb4_bin" {
			t.Errorf("database %q collation %q after alter", name, info.Collation)
		}
	}
	rows, err := e.root(0).QueryContext(ctx, "SHOW DATABASES")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for rows.Next() {
		var n string
		_ = rows.Scan(&n)
		names = append(names, n)
	}
	_ = rows.Close()
	for _, name := range awkward {
		if !slices.Contains(names, name) {
			t.Errorf("database %q not in SHOW DATABASES %q", name, names)
		}
	}
	if err := in.CreateDatabase(ctx, DatabaseSpec{Name: "x", CharacterSet: "utf8mb4'; DROP"}); err == nil {
		t.Error("bad character set name accepted")
	}
	if err := in.DropDatabase(ctx, "semi;colon -- x"); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := in.Database(ctx, "semi;colon -- x"); ok || err != nil {
		t.Errorf("dropped database still there (%v)", err)
	}
	if err := in.DropDatabase(ctx, "semi;colon -- x"); err != nil {
		t.Errorf("drop of a missing database: %v", err)
	}
}

func testUsers(t *testing.T, e *env) {
	ctx, in, addr := context.Background(), e.ins[0], e.servers[0].Addr()
	for _, name := range awkward {
		pw := `pw'"` + "`\\%_" + name
		spec := UserSpec{Name: name, Host: "%", Password: pw, MaxUserConnections: 3}
		if err := in.CreateUser(ctx, spec); err != nil {
			t.Fatalf("create user %q: %v", name, err)
		}
		if info, ok, err := in.User(ctx, name, "%"); err != nil || !ok || info != (UserInfo{MaxUserConnections: 3}) {
			t.Errorf("user %q = %+v, %v, %v", name, info, ok, err)
		}
		if err := rawDB(t, addr, name, pw).PingContext(ctx); err != nil {
			t.Errorf("login as %q: %v", name, err)
		}
		spec.MaxUserConnections, spec.RequireSSL = 5, true
		if err := in.AlterUser(ctx, spec, false); err != nil {
			t.Fatalf("alter user %q: %v", name, err)
		}
		if info, _, _ := in.User(ctx, name, "%"); info != (UserInfo{MaxUserConnections: 5, RequireSSL: true}) {
			t.Errorf("user %q after alter = %+v", name, info)
		}
		if err := rawDB(t, addr, name, pw).PingContext(ctx); mysqlErrno(err) != 1045 {
			t.Errorf("login without TLS as %q requiring SSL: want 1045, got %v", name, err)
		}
		spec.RequireSSL, spec.Password = false, "new-"+pw
		if err := in.AlterUser(ctx, spec, true); err != nil {
			t.Fatalf("alter user %q password: %v", name, err)
		}
		if err := rawDB(t, addr, name, "new-"+pw).PingContext(ctx); err != nil {
			t.Errorf("login as %q with the new password: %v", name, err)
		}
		if err := rawDB(t, addr, name, pw).PingContext(ctx); mysqlErrno(err) != 1045 {
			t.Errorf("old password of %q still accepted: %v", name, err)
		}
	}
	if err := in.DropUser(ctx, "o'brien", "%"); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := in.User(ctx, "o'brien", "%"); ok || err != nil {
		t.Errorf("dropped user still there (%v)", err)
	}
	if err := in.DropUser(ctx, "o'brien", "%"); err != nil {
		t.Errorf("drop of a missing user: %v", err)
	}
}

func testGrants(t *testing.T, e *env) {
	ctx, in, addr := context.Background(), e.ins[0], e.servers[0].Addr()
	const user, host, pw = "grantee`'%", "%", "grantee-pw"
	if err := in.CreateUser(ctx, UserSpec{Name: user, Host: host, Password: pw}); err != nil {
		t.Fatal(err)
	}
	tbl, _ := QuoteIdentifier("tab`le")
	for _, db := range []string{"o'brien", "100%_db"} {
		q, _ := QuoteIdentifier(db)
		if _, err := e.root(0).ExecContext(ctx, "CREATE TABLE "+q+"."+tbl+" (id INT)"); err != nil {
			t.Fatal(err)
		}
		if err := in.GrantPrivileges(ctx, user, host, Grant{Database: db, Table: "*", Privileges: []string{"select", "Insert"}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := in.GrantPrivileges(ctx, user, host, Grant{Database: "o'brien", Table: "tab`le", Privileges: []string{"UPDATE"}, GrantOption: true}); err != nil {
		t.Fatal(err)
	}
	got, err := in.Grants(ctx, user, host)
	if err != nil {
		t.Fatal(err)
	}
	want := []Grant{
		{Database: "o'brien", Table: "*", Privileges: []string{"INSERT", "SELECT"}},
		{Database: "100%_db", Table: "*", Privileges: []string{"INSERT", "SELECT"}},
		{Database: "o'brien", Table: "tab`le", Privileges: []string{"UPDATE"}, GrantOption: true},
	}
	sortGrants(got)
	sortGrants(want)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("grants = %+v\nwant %+v", got, want)
	}
	checkWildcardEscaped(t, e, rawDB(t, addr, user, pw), tbl)
	revoke := []Grant{{Database: "o'brien", Table: "*", Privileges: []string{"INSERT"}},
		{Database: "o'brien", Table: "tab`le", GrantOption: true}}
	for _, g := range revoke {
		if err := in.RevokePrivileges(ctx, user, host, g); err != nil {
			t.Fatal(err)
		}
	}
	got, _ = in.Grants(ctx, user, host)
	sortGrants(got)
	want[1].Privileges, want[2].GrantOption = []string{"SELECT"}, false
	if !reflect.DeepEqual(got, want) {
		t.Errorf("grants after revoke = %+v\nwant %+v", got, want)
	}
	for _, bad := range []string{"SUPER", "READ_ONLY ADMIN", "SELEKT", "SELECT; DROP DATABASE x", "FILE"} {
		err := in.GrantPrivileges(ctx, user, host, Grant{Database: "o'brien", Table: "*", Privileges: []string{bad}})
		if err == nil || !strings.Contains(err.Error(), "privilege") {
			t.Errorf("privilege %q: %v", bad, err)
		}
	}
}

// checkWildcardEscaped checks that the grant on 100%_db names that database only:
// % and _ were escaped.
func checkWildcardEscaped(t *testing.T, e *env, app *sql.DB, tbl string) {
	ctx := context.Background()
	if _, err := e.root(0).ExecContext(ctx, "CREATE DATABASE `100abcXdb`"); err != nil {
		t.Fatal(err)
	}
	if _, err := app.ExecContext(ctx, "SELECT 1 FROM `100%_db`."+tbl); err != nil {
		t.Errorf("select on the granted database: %v", err)
	}
	if _, err := app.ExecContext(ctx, "CREATE TABLE `100abcXdb`.t (id INT)"); mysqlErrno(err) != 1142 && mysqlErrno(err) != 1044 {
		t.Errorf("grant on 100%%_db leaked to 100abcXdb: %v", err)
	}
}

func sortGrants(gs []Grant) {
	slices.SortFunc(gs, func(a, b Grant) int {
		return strings.Compare(a.Database+"\x00"+a.Table, b.Database+"\x00"+b.Table)
	})
}

func TestParseGrants(t *testing.T) {
	lines := []string{
		// As MariaDB 10.11 prints them.
		"GRANT USAGE ON *.* TO `app`@`%` IDENTIFIED BY PASSWORD '*D821809F681A40A6E379B50D0463EFAE20BDD122'",
		"GRANT SELECT, INSERT, CREATE TEMPORARY TABLES ON `shop\\_db`.* TO `app`@`%`",
		"GRANT UPDATE ON `shop\\_db`.* TO `app`@`%` WITH GRANT OPTION",
		"GRANT SELECT (`a`, `b on c`), UPDATE (`a`) ON `x`.`t` TO `app`@`%`",
		"GRANT DELETE ON `we``ird`.`ta``ble` TO `app`@`%`",
		"GRANT PROXY ON ''@'%' TO 'root'@'localhost' WITH GRANT OPTION",
		"GRANT `role1` TO `app`@`%`",
		"GRANT ALL PRIVILEGES ON *.* TO `admin`@`%` WITH GRANT OPTION",
	}
	got, err := ParseGrants(lines)
	if err != nil {
		t.Fatal(err)
	}
	want := []Grant{
		{Database: "shop_db", Table: "*", Privileges: []string{"CREATE TEMPORARY TABLES", "INSERT", "SELECT", "UPDATE"}, GrantOption: true},
		{Database: "we`ird", Table: "ta`ble", Privileges: []string{"DELETE"}},
		{Database: "*", Table: "*", Privileges: []string{"ALL PRIVILEGES"}, GrantOption: true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ParseGrants = %+v\nwant %+v", got, want)
	}
	_, err = ParseGrants([]string{"REVOKE hunter2"})
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("bad line: %v", err)
	}
}
