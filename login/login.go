// Package login is what `kubectl mysql login` (package plugin) and `agent
// login` in a pod agree on: the mark the agent writes when it is ready for
// the password, and the quoting of an option file's values. It is
// portable: the plugin runs on any OS.
package login

import (
	"errors"
	"fmt"
	"strings"
)

// Ready is what `agent login` writes to its standard output once it is
// ready to read the password: `kubectl mysql login` sends it then, and
// strips this mark from what it shows.
const Ready = "[mysql-operator: password]"

// OptionValue quotes v for an option file, whose reader strips a pair of
// quotes around a value and turns \\ into a backslash. Within the quotes
// a quote of the other kind is plain; one of the same kind would end
// them for the comment scanner, so a value with both kinds is refused.
func OptionValue(v string) (string, error) {
	q := `"`
	switch {
	case strings.ContainsAny(v, "\n\x00"):
		return "", errors.New("holds a line break or a NUL byte")
	case strings.Contains(v, `"`) && strings.Contains(v, `'`):
		return "", errors.New(`holds both ' and ": log in with another client`)
	case strings.Contains(v, `"`):
		q = `'`
	}
	return q + strings.ReplaceAll(v, `\`, `\\`) + q, nil
}

// ClientOptions is the [client] section of an option file that logs in
// as user with password, then the lines given ("socket=...",
// "host=..."), each value of user and password quoted by OptionValue.
func ClientOptions(user, password string, lines ...string) (string, error) {
	u, err := OptionValue(user)
	if err != nil {
		return "", fmt.Errorf("the user: %w", err)
	}
	p, err := OptionValue(password)
	if err != nil {
		return "", fmt.Errorf("the password: %w", err)
	}
	return "[client]\nuser=" + u + "\npassword=" + p + "\n" + strings.Join(append(lines, ""), "\n"), nil
}
