package dbop

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Grant is a set of privileges of one account on one database or table.
type Grant struct {
	// Database is the database name, "*" for every database.
	Database string
	// Table is the table name, "*" for every table of Database.
	Table string
	// Privileges are privilege names in upper case ("SELECT", "ALL PRIVILEGES"),
	// sorted. USAGE (no privilege) is never listed.
	Privileges []string
	// GrantOption is WITH GRANT OPTION.
	GrantOption bool
}

// normalizePrivileges upper-cases, de-duplicates, sorts and validates privilege
// names against the dialect's list (database and table privileges only).
func normalizePrivileges(d Dialect, privs []string) ([]string, error) {
	var out []string
	for _, p := range privs {
		n := strings.Join(strings.Fields(strings.ToUpper(p)), " ")
		if n == "ALL" {
			n = "ALL PRIVILEGES"
		}
		if !d.privileges()[n] {
			return nil, fmt.Errorf("unknown or disallowed privilege %q", p)
		}
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out, nil
}

// escapeDBPattern escapes the wildcards of a database-level grant (_ and % match
// any character there), so that a grant names exactly one database.
func escapeDBPattern(name string) string {
	r := strings.NewReplacer(`\`, `\\`, `_`, `\_`, `%`, `\%`)
	return r.Replace(name)
}

// unescapeDBPattern undoes escapeDBPattern.
func unescapeDBPattern(p string) string {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		if p[i] == '\\' && i+1 < len(p) {
			i++
		}
		b.WriteByte(p[i])
	}
	return b.String()
}

// grantLevel renders "`db`.*", "`db`.`table`" or "*.*".
func grantLevel(g Grant) (string, error) {
	if g.Database == "*" {
		if g.Table != "*" {
			return "", errors.New("a table grant needs a database")
		}
		return "*.*", nil
	}
	if g.Table == "*" {
		db, err := QuoteIdentifier(escapeDBPattern(g.Database))
		return db + ".*", err
	}
	db, err := QuoteIdentifier(g.Database)
	if err != nil {
		return "", err
	}
	tbl, err := QuoteIdentifier(g.Table)
	return db + "." + tbl, err
}

// grantStmts renders GRANT (or REVOKE) of g's privileges for 'user'@'host'.
func grantStmts(d Dialect, verb, user, host string, g Grant) ([]Stmt, error) {
	privs, err := normalizePrivileges(d, g.Privileges)
	if err != nil {
		return nil, err
	}
	level, err := grantLevel(g)
	if err != nil {
		return nil, err
	}
	var out []Stmt
	to := " TO ?@?"
	if verb == "REVOKE" {
		to = " FROM ?@?"
	}
	if len(privs) > 0 {
		s := verb + " " + strings.Join(privs, ", ") + " ON " + level + to
		if verb == "GRANT" && g.GrantOption {
			s += " WITH GRANT OPTION"
		}
		out = append(out, stmt(s, user, host))
	}
	if verb == "REVOKE" && g.GrantOption {
		out = append(out, stmt("REVOKE GRANT OPTION ON "+level+" FROM ?@?", user, host))
	}
	if len(out) == 0 {
		return nil, errors.New("no privilege to " + strings.ToLower(verb))
	}
	return out, nil
}

// GrantPrivileges grants g to 'user'@'host'. Privilege names are validated for
// the dialect; only database and table privileges are accepted.
func (i *Instance) GrantPrivileges(ctx context.Context, user, host string, g Grant) error {
	return i.run(ctx, "grant", func(d Dialect) ([]Stmt, error) { return grantStmts(d, "GRANT", user, host, g) })
}

// RevokePrivileges revokes g's privileges (and the grant option when
// g.GrantOption) from 'user'@'host'.
func (i *Instance) RevokePrivileges(ctx context.Context, user, host string, g Grant) error {
	return i.run(ctx, "revoke", func(d Dialect) ([]Stmt, error) { return grantStmts(d, "REVOKE", user, host, g) })
}

// Grants returns the privileges of 'user'@'host' per (database, table), from SHOW
// GRANTS. Global USAGE, proxy, role and column grants are not listed.
func (i *Instance) Grants(ctx context.Context, user, host string) ([]Grant, error) {
	rows, err := i.db.QueryContext(ctx, "SHOW GRANTS FOR ?@?", user, host)
	if err != nil {
		return nil, fmt.Errorf("show grants on %s: %w", i.addr, err)
	}
	defer func() { _ = rows.Close() }()
	var lines []string
	for rows.Next() {
		var l string
		if err := rows.Scan(&l); err != nil {
			return nil, fmt.Errorf("show grants on %s: %w", i.addr, err)
		}
		lines = append(lines, l)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("show grants on %s: %w", i.addr, err)
	}
	gs, err := ParseGrants(lines)
	if err != nil {
		return nil, fmt.Errorf("show grants on %s: %w", i.addr, err)
	}
	return gs, nil
}
