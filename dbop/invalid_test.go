package dbop

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"
)

func TestIsInvalid(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"unknown collation", fmt.Errorf("alter database on x: %w", &mysql.MySQLError{Number: 1273}), true},
		{"illegal grant for a table", &mysql.MySQLError{Number: 1144}, true},
		{"dbop's own refusal", fmt.Errorf("check privileges: %w: unknown", ErrInvalid), true},
		{"read-only server", &mysql.MySQLError{Number: 1290}, false},
		{"access denied", &mysql.MySQLError{Number: 1045}, false},
		{"connection refused", errors.New("dial tcp: connection refused"), false},
		{"nil", nil, false},
	}
	for _, tt := range tests {
		if got := IsInvalid(tt.err); got != tt.want {
			t.Errorf("%s: IsInvalid = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestPrivilegesPerDialect checks the names each family accepts: DELETE
// HISTORY is MariaDB's only.
func TestPrivilegesPerDialect(t *testing.T) {
	for _, tt := range []struct {
		d    Dialect
		priv string
		ok   bool
	}{
		{MariaDB, "DELETE HISTORY", true}, {MySQL, "DELETE HISTORY", false},
		{MySQL, "select", true}, {MySQL, "ALL", true}, {MariaDB, "SUPER", false}, {MySQL, "GRANT OPTION", false},
	} {
		_, err := normalizePrivileges(tt.d, []string{tt.priv})
		if (err == nil) != tt.ok {
			t.Errorf("%s %q: %v, want ok=%v", tt.d.Engine(), tt.priv, err, tt.ok)
		}
	}
}

// TestInvalidOnServer checks that what the server refuses for what it says
// is told apart from what may pass, on a real server.
func TestInvalidOnServer(t *testing.T) {
	e := startEnv(t, 1)
	ctx, in := context.Background(), e.ins[0]
	if err := in.Promote(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if err := in.CheckPrivileges(ctx, []string{"SELECT", "DELETE HISTORY"}); err != nil {
		t.Errorf("valid MariaDB privileges refused: %v", err)
	}
	err := in.CheckPrivileges(ctx, []string{"SELECT", "SUPER"})
	if !IsInvalid(err) || !strings.Contains(err.Error(), `"SUPER"`) {
		t.Errorf("SUPER: %v, want an invalid error naming it", err)
	}
	err = in.CreateDatabase(ctx, DatabaseSpec{Name: "x", CharacterSet: "nosuchcharset"})
	if !IsInvalid(err) {
		t.Errorf("unknown character set: %v, want invalid", err)
	}
	err = in.CreateDatabase(ctx, DatabaseSpec{Name: "x", CharacterSet: "latin1", Collation: "utf8mb4_bin"})
	if !IsInvalid(err) {
		t.Errorf("collation of another character set: %v, want invalid", err)
	}
	if err := in.CreateDatabase(ctx, DatabaseSpec{Name: "x"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.root(0).ExecContext(ctx, "CREATE TABLE x.t (id INT)"); err != nil {
		t.Fatal(err)
	}
	if err := in.CreateUser(ctx, UserSpec{Name: "u", Host: "%", Password: "pw"}); err != nil {
		t.Fatal(err)
	}
	err = in.GrantPrivileges(ctx, "u", "%", Grant{Database: "x", Table: "t", Privileges: []string{"EXECUTE"}})
	if !IsInvalid(err) {
		t.Errorf("a database privilege on a table: %v, want invalid", err)
	}
	err = in.GrantPrivileges(ctx, "nobody", "%", Grant{Database: "x", Table: "*", Privileges: []string{"SELECT"}})
	if err == nil || IsInvalid(err) {
		t.Errorf("a grant to a missing account: %v, want an error that may pass once the account exists", err)
	}
}
