package children

import "testing"

// TestLastErrorLine picks the line that says why a container failed, and
// none where the end of its log says nothing of it.
func TestLastErrorLine(t *testing.T) {
	for _, tt := range []struct{ log, want string }{
		{"2026-12-06 10:00:00 0 [Note] Starting MariaDB\n2026-12-06 10:00:00 0 [ERROR] mariadbd: unknown variable 'x=1'\n2026-12-06 10:00:00 0 [ERROR] Aborting\n",
			"2026-12-06 10:00:00 0 [ERROR] mariadbd: unknown variable 'x=1'"},
		{"2026-12-06T10:00:00Z 0 [ERROR] [MY-000067] [Server] unknown variable 'x=1'.\n2026-12-06T10:00:00Z 0 [ERROR] [MY-010119] [Server] Aborting\n",
			"2026-12-06T10:00:00Z 0 [ERROR] [MY-000067] [Server] unknown variable 'x=1'."},
		{"agent init: the image's server is MySQL 8.4.3 (/usr/sbin/mysqld), but spec.engine is MariaDB\n",
			"agent init: the image's server is MySQL 8.4.3 (/usr/sbin/mysqld), but spec.engine is MariaDB"},
		// Killed from outside: the last notes name an error that is not why.
		{"2026-12-06 18:11:42 5623 [Note] Error reading relay log event: slave SQL thread was killed\n", ""},
		{"", ""},
	} {
		if got := LastErrorLine(tt.log); got != tt.want {
			t.Errorf("LastErrorLine(%q) = %q, want %q", tt.log, got, tt.want)
		}
	}
}
