package dbop

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// This file holds the only functions that put text into SQL. Values go through
// placeholders everywhere else; these functions are for what placeholders cannot
// carry: identifiers (database, table names) and the literals of the bootstrap file,
// which the server executes itself.

// QuoteIdentifier quotes name as an identifier: `name`, with every backtick doubled.
// It rejects the empty name, NUL, invalid UTF-8 and characters outside the Basic
// Multilingual Plane, which neither MySQL nor MariaDB allow in identifiers.
// Backslashes, quotes, % and newlines are ordinary characters inside backticks.
func QuoteIdentifier(name string) (string, error) {
	if err := checkText("identifier", name); err != nil {
		return "", err
	}
	if name == "" {
		return "", errors.New("empty identifier")
	}
	for _, r := range name {
		if r > 0xFFFF {
			return "", fmt.Errorf("identifier has character U+%04X outside the Basic Multilingual Plane", r)
		}
	}
	return "`" + strings.ReplaceAll(name, "`", "``") + "`", nil
}

// QuoteString quotes s as a string literal for SQL text that the server reads
// itself (the bootstrap file): '...' with backslash and quote escaped, and newline,
// carriage return and Ctrl-Z written as escapes so that the literal stays on one
// line (init files are read line by line). The escapes assume sql_mode without
// NO_BACKSLASH_ESCAPES, which such files set first. NUL and invalid UTF-8 are
// rejected.
func QuoteString(s string) (string, error) {
	if err := checkText("string", s); err != nil {
		return "", err
	}
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('\'')
	for _, r := range s {
		switch r {
		case '\\':
			b.WriteString(`\\`)
		case '\'':
			b.WriteString(`\'`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case 0x1a:
			b.WriteString(`\Z`)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('\'')
	return b.String(), nil
}

// QuoteAccount quotes an account name for SQL text the server reads itself:
// 'user'@'host', both parts through QuoteString.
func QuoteAccount(user, host string) (string, error) {
	u, err := QuoteString(user)
	if err != nil {
		return "", fmt.Errorf("account user: %w", err)
	}
	h, err := QuoteString(host)
	if err != nil {
		return "", fmt.Errorf("account host: %w", err)
	}
	return u + "@" + h, nil
}

// checkText rejects NUL and invalid UTF-8, without echoing the text (it may be a
// password).
func checkText(what, s string) error {
	if !utf8.ValidString(s) {
		return fmt.Errorf("%s is not valid UTF-8", what)
	}
	if strings.IndexByte(s, 0) >= 0 {
		return fmt.Errorf("%s contains NUL", what)
	}
	return nil
}
