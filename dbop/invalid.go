package dbop

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-sql-driver/mysql"
)

// ErrInvalid marks an error no retry can fix: dbop or the server refused
// what it was asked to do as invalid (an unknown privilege, character set
// or collation, a privilege that does not apply at the level asked, a name
// the server does not accept). What was asked has to change. Test it with
// IsInvalid, which also recognises the server's own refusals.
var ErrInvalid = errors.New("invalid request")

// invalidErrors are the server error numbers that refuse a statement for
// what it says, not for the state of the server: the same statement fails
// again however often it is retried.
var invalidErrors = map[uint16]bool{
	1059: true, // ER_TOO_LONG_IDENT: identifier too long
	1064: true, // ER_PARSE_ERROR
	1102: true, // ER_WRONG_DB_NAME
	1103: true, // ER_WRONG_TABLE_NAME
	1115: true, // ER_UNKNOWN_CHARACTER_SET
	1144: true, // ER_ILLEGAL_GRANT_FOR_TABLE: privilege not for this level
	1221: true, // ER_WRONG_USAGE: e.g. database privileges on a table
	1253: true, // ER_COLLATION_CHARSET_MISMATCH
	1273: true, // ER_UNKNOWN_COLLATION
	1470: true, // ER_WRONG_STRING_LENGTH: user or host name too long
}

// IsInvalid says whether err refuses a request as invalid (see ErrInvalid):
// dbop's own validation, or a server error that retrying cannot fix.
func IsInvalid(err error) bool {
	if errors.Is(err, ErrInvalid) {
		return true
	}
	var me *mysql.MySQLError
	return errors.As(err, &me) && invalidErrors[me.Number]
}

// CheckPrivileges validates privilege names for the instance's server
// family, as GrantPrivileges does, without granting anything: an error
// wraps ErrInvalid and names the first privilege refused.
func (i *Instance) CheckPrivileges(ctx context.Context, privs []string) error {
	d, err := i.Dialect(ctx)
	if err != nil {
		return fmt.Errorf("check privileges: %w", err)
	}
	if _, err := normalizePrivileges(d, privs); err != nil {
		return fmt.Errorf("check privileges on %s: %w: %w", i.addr, ErrInvalid, err)
	}
	return nil
}
