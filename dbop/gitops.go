package dbop

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
)

// The statements of this file manage the databases and users declared in Git.
// They change data that must replicate: run them on the primary only.

// DatabaseSpec is a database and its defaults.
type DatabaseSpec struct {
	// Name is the database name (any text, quoted with QuoteIdentifier).
	Name string
	// CharacterSet is the default character set ("utf8mb4"); "" keeps the
	// server's default.
	CharacterSet string
	// Collation is the default collation ("utf8mb4_unicode_ci"); "" keeps the
	// character set's default.
	Collation string
}

// DatabaseInfo is what the server reports about a database.
type DatabaseInfo struct {
	// CharacterSet is the default character set.
	CharacterSet string
	// Collation is the default collation.
	Collation string
}

// checkCharsetName accepts character set and collation names: ASCII letters,
// digits and underscores, as every built-in one is.
func checkCharsetName(what, s string) error {
	for _, c := range s {
		if !(c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) {
			return fmt.Errorf("invalid %s name", what)
		}
	}
	return nil
}

// databaseOptions renders " CHARACTER SET = ? COLLATE = ?" for the set fields.
func databaseOptions(spec DatabaseSpec) (string, []any, error) {
	if err := checkCharsetName("character set", spec.CharacterSet); err != nil {
		return "", nil, err
	}
	if err := checkCharsetName("collation", spec.Collation); err != nil {
		return "", nil, err
	}
	var sqlText string
	var args []any
	if spec.CharacterSet != "" {
		sqlText += " CHARACTER SET = ?"
		args = append(args, spec.CharacterSet)
	}
	if spec.Collation != "" {
		sqlText += " COLLATE = ?"
		args = append(args, spec.Collation)
	}
	return sqlText, args, nil
}

// createDatabase renders CREATE DATABASE IF NOT EXISTS.
func createDatabase(spec DatabaseSpec) ([]Stmt, error) {
	name, err := QuoteIdentifier(spec.Name)
	if err != nil {
		return nil, err
	}
	opts, args, err := databaseOptions(spec)
	if err != nil {
		return nil, err
	}
	return []Stmt{{SQL: "CREATE DATABASE IF NOT EXISTS " + name + opts, Args: args}}, nil
}

// alterDatabase renders ALTER DATABASE with the set options.
func alterDatabase(spec DatabaseSpec) ([]Stmt, error) {
	name, err := QuoteIdentifier(spec.Name)
	if err != nil {
		return nil, err
	}
	opts, args, err := databaseOptions(spec)
	if err != nil {
		return nil, err
	}
	if opts == "" {
		return nil, errors.New("alter database: nothing to change")
	}
	return []Stmt{{SQL: "ALTER DATABASE " + name + opts, Args: args}}, nil
}

// dropDatabase renders DROP DATABASE IF EXISTS.
func dropDatabase(name string) ([]Stmt, error) {
	q, err := QuoteIdentifier(name)
	if err != nil {
		return nil, err
	}
	return []Stmt{stmt("DROP DATABASE IF EXISTS " + q)}, nil
}

// databaseInfoQuery reads a database's defaults.
func databaseInfoQuery(name string) Stmt {
	return stmt("SELECT DEFAULT_CHARACTER_SET_NAME, DEFAULT_COLLATION_NAME FROM information_schema.SCHEMATA "+
		"WHERE SCHEMA_NAME = ?", name)
}

// CreateDatabase creates the database if it does not exist.
func (i *Instance) CreateDatabase(ctx context.Context, spec DatabaseSpec) error {
	ss, err := createDatabase(spec)
	if err != nil {
		return fmt.Errorf("create database on %s: %w", i.addr, err)
	}
	return i.exec(ctx, "create database", ss)
}

// AlterDatabase changes a database's character set and collation.
func (i *Instance) AlterDatabase(ctx context.Context, spec DatabaseSpec) error {
	ss, err := alterDatabase(spec)
	if err != nil {
		return fmt.Errorf("alter database on %s: %w", i.addr, err)
	}
	return i.exec(ctx, "alter database", ss)
}

// DropDatabase drops the database if it exists, with its data.
func (i *Instance) DropDatabase(ctx context.Context, name string) error {
	ss, err := dropDatabase(name)
	if err != nil {
		return fmt.Errorf("drop database on %s: %w", i.addr, err)
	}
	return i.exec(ctx, "drop database", ss)
}

// Database returns a database's defaults; ok is false when it does not exist.
func (i *Instance) Database(ctx context.Context, name string) (info DatabaseInfo, ok bool, err error) {
	s := databaseInfoQuery(name)
	err = i.db.QueryRowContext(ctx, s.SQL, s.Args...).Scan(&info.CharacterSet, &info.Collation)
	if errors.Is(err, sql.ErrNoRows) {
		return DatabaseInfo{}, false, nil
	}
	if err != nil {
		return DatabaseInfo{}, false, fmt.Errorf("read database on %s: %w", i.addr, err)
	}
	return info, true, nil
}

// UserSpec is an account and its attributes.
type UserSpec struct {
	// Name and Host form the account 'Name'@'Host'.
	Name string
	// Host is the client host pattern ("%" for any).
	Host string
	// Password is the account's password.
	Password string
	// MaxUserConnections limits simultaneous connections; 0 means no limit.
	MaxUserConnections int
	// RequireSSL refuses connections without TLS.
	RequireSSL bool
	// RequireSubject, when set, refuses connections without a client
	// certificate of this subject (REQUIRE SUBJECT); it implies TLS.
	RequireSubject string
}

// UserInfo is what the server reports about an account (the password cannot be
// read back).
type UserInfo struct {
	// MaxUserConnections is the connection limit, 0 for none.
	MaxUserConnections int
	// RequireSSL is true when the account requires TLS (ssl_type ANY).
	RequireSSL bool
	// RequireSubject is the client certificate subject the account
	// requires (ssl_type SPECIFIED), empty for none.
	RequireSubject string
}

// userStmt renders CREATE USER or ALTER USER with the attributes of spec; the
// password is set when withPassword.
func userStmt(verb string, spec UserSpec, withPassword bool) ([]Stmt, error) {
	if spec.Name == "" || spec.Host == "" {
		return nil, errors.New("user name and host are required")
	}
	if err := checkText("user", spec.Name+spec.Host+spec.Password+spec.RequireSubject); err != nil {
		return nil, err
	}
	if spec.MaxUserConnections < 0 {
		return nil, errors.New("max user connections is negative")
	}
	q := verb + " USER ?@?"
	args := []any{spec.Name, spec.Host}
	if withPassword {
		q += " IDENTIFIED BY ?"
		args = append(args, spec.Password)
	}
	switch {
	case spec.RequireSubject != "":
		q += " REQUIRE SUBJECT ?"
		args = append(args, spec.RequireSubject)
	case spec.RequireSSL:
		q += " REQUIRE SSL"
	default:
		q += " REQUIRE NONE"
	}
	q += " WITH MAX_USER_CONNECTIONS ?"
	args = append(args, spec.MaxUserConnections)
	return []Stmt{{SQL: q, Args: args, Secret: withPassword}}, nil
}

// userInfoQuery reads an account's attributes from mysql.user (a view on MariaDB).
func userInfoQuery(name, host string) Stmt {
	return stmt("SELECT max_user_connections, ssl_type, CAST(x509_subject AS CHAR) FROM mysql.user WHERE User = ? AND Host = ?", name, host)
}

// CreateUser creates an account with its password and attributes.
func (i *Instance) CreateUser(ctx context.Context, spec UserSpec) error {
	ss, err := userStmt("CREATE", spec, true)
	if err != nil {
		return fmt.Errorf("create user on %s: %w", i.addr, err)
	}
	return i.exec(ctx, "create user", ss)
}

// AlterUser sets an account's attributes, and its password when setPassword.
func (i *Instance) AlterUser(ctx context.Context, spec UserSpec, setPassword bool) error {
	ss, err := userStmt("ALTER", spec, setPassword)
	if err != nil {
		return fmt.Errorf("alter user on %s: %w", i.addr, err)
	}
	return i.exec(ctx, "alter user", ss)
}

// DropUser drops an account if it exists.
func (i *Instance) DropUser(ctx context.Context, name, host string) error {
	return i.exec(ctx, "drop user", []Stmt{stmt("DROP USER IF EXISTS ?@?", name, host)})
}

// User returns an account's attributes; ok is false when it does not exist.
func (i *Instance) User(ctx context.Context, name, host string) (info UserInfo, ok bool, err error) {
	s := userInfoQuery(name, host)
	var sslType string
	var subject sql.NullString
	err = i.db.QueryRowContext(ctx, s.SQL, s.Args...).Scan(&info.MaxUserConnections, &sslType, &subject)
	if errors.Is(err, sql.ErrNoRows) {
		return UserInfo{}, false, nil
	}
	if err != nil {
		return UserInfo{}, false, fmt.Errorf("read user on %s: %w", i.addr, err)
	}
	info.RequireSSL = strings.EqualFold(sslType, "ANY")
	if strings.EqualFold(sslType, "SPECIFIED") {
		info.RequireSubject = subject.String
	}
	return info, true, nil
}
