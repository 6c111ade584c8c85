package dbop

// commonPrivileges are the database- and table-level privileges of both families.
var commonPrivileges = []string{
	"ALL PRIVILEGES", "ALTER", "ALTER ROUTINE", "CREATE", "CREATE ROUTINE", "CREATE TEMPORARY TABLES",
	"CREATE VIEW", "DELETE", "DROP", "EVENT", "EXECUTE", "INDEX", "INSERT", "LOCK TABLES", "REFERENCES",
	"SELECT", "SHOW VIEW", "TRIGGER", "UPDATE",
}

// privilegeSet builds a lookup set from lists of privilege names.
func privilegeSet(names []string, more ...string) map[string]bool {
	m := make(map[string]bool, len(names)+len(more))
	for _, n := range append(append([]string(nil), names...), more...) {
		m[n] = true
	}
	return m
}
