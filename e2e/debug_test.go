package e2e

import (
	"strings"
	"testing"

	"github.com/example/mysql-operator/internal/testenv"
)

// TestLogsAndExec: a database pod on the real node can be debugged with
// kubectl: its server's log is read, and a command runs in its container.
func TestLogsAndExec(t *testing.T) {
	ns := testenv.NewNamespace(t, c.Client)
	createMySQL(t, ns, "db", 1)
	waitCurrent(t, key(ns, "db"))
	if out := kubectl(t, "-n", ns, "logs", "db-0", "-c", "mysql"); !strings.Contains(out, "ready for connections") {
		t.Errorf("kubectl logs: the server's log does not say it is ready:\n%s", out)
	}
	if out := kubectl(t, "-n", ns, "exec", "db-0", "-c", "mysql", "--", "mariadbd", "--version"); !strings.Contains(out, "MariaDB") {
		t.Errorf("kubectl exec: %q, want the server's version", out)
	}
}
