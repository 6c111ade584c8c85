package dbop

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/example/mysql-operator/topology"
)

// Engine is the server software: MySQL or MariaDB.
type Engine int

const (
	// EngineMySQL is Oracle MySQL (and compatible builds reporting no "MariaDB").
	EngineMySQL Engine = iota + 1
	// EngineMariaDB is MariaDB Server.
	EngineMariaDB
)

// String names the engine.
func (e Engine) String() string {
	switch e {
	case EngineMySQL:
		return "MySQL"
	case EngineMariaDB:
		return "MariaDB"
	}
	return "Engine(" + strconv.Itoa(int(e)) + ")"
}

// Version is a parsed SELECT VERSION().
type Version struct {
	// Engine is MySQL or MariaDB.
	Engine Engine
	// Major, Minor and Patch are the numeric version.
	Major, Minor, Patch int
	// Suffix is what follows the numbers ("-MariaDB-0+deb12u2-log", "-commercial").
	Suffix string
}

// String formats the version as "MariaDB 10.11.14".
func (v Version) String() string {
	return fmt.Sprintf("%s %d.%d.%d", v.Engine, v.Major, v.Minor, v.Patch)
}

// AtLeast reports whether v is major.minor.patch or later.
func (v Version) AtLeast(major, minor, patch int) bool {
	if v.Major != major {
		return v.Major > major
	}
	if v.Minor != minor {
		return v.Minor > minor
	}
	return v.Patch >= patch
}

// ParseVersion parses SELECT VERSION() output: "10.11.14-MariaDB-0+deb12u2-log",
// "8.4.3", "9.7.0", "8.0.40-commercial". The engine is MariaDB when the suffix says
// so (MariaDB 10 and later do not use a "5.5.5-" prefix in VERSION()), else MySQL.
func ParseVersion(s string) (Version, error) {
	s = strings.TrimSpace(s)
	num, suffix := s, ""
	if i := strings.IndexFunc(s, func(r rune) bool { return r != '.' && (r < '0' || r > '9') }); i >= 0 {
		num, suffix = s[:i], s[i:]
	}
	parts := strings.Split(num, ".")
	if len(parts) != 3 {
		return Version{}, fmt.Errorf("parse version %q: want major.minor.patch", s)
	}
	var n [3]int
	for i, p := range parts {
		v, err := strconv.Atoi(p)
		if err != nil || v < 0 {
			return Version{}, fmt.Errorf("parse version %q: bad number %q", s, p)
		}
		n[i] = v
	}
	e := EngineMySQL
	if strings.Contains(strings.ToLower(suffix), "mariadb") {
		e = EngineMariaDB
	}
	return Version{Engine: e, Major: n[0], Minor: n[1], Patch: n[2], Suffix: suffix}, nil
}

// ErrUnsupportedVersion is returned for server versions this package has no dialect
// for: MySQL before 8.4 and MariaDB before 10.11.
var ErrUnsupportedVersion = errors.New("unsupported server version")

// DialectFor returns the dialect for a server version: MySQL 8.4 and later, or
// MariaDB 10.11 and later.
func DialectFor(v Version) (Dialect, error) {
	switch {
	case v.Engine == EngineMySQL && v.AtLeast(8, 4, 0):
		return MySQL, nil
	case v.Engine == EngineMariaDB && v.AtLeast(10, 11, 0):
		return MariaDB, nil
	}
	return nil, fmt.Errorf("%w: %s", ErrUnsupportedVersion, v)
}

// DialectOf returns the dialect of the GTID flavor f: what is the same for
// every version of an engine (SemiSyncAcks), when no server can be asked
// its version (a lost primary). Statements are rendered by the dialect
// DialectFor picks from the server's version.
func DialectOf(f topology.Flavor) Dialect {
	if f == topology.FlavorMariaDB {
		return MariaDB
	}
	return MySQL
}
