package agent

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/example/mysql-operator/backup"
	"github.com/example/mysql-operator/dbop"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// TestToolsGolden renders every backup, restore and replay command of each
// engine into testdata/tools-<engine>.txt; the MySQL ones run nowhere
// here (`go test ./agent -run ToolsGolden -update` rewrites the files).
func TestToolsGolden(t *testing.T) {
	at := time.Date(2026, 12, 5, 14, 3, 27, 0, time.UTC)
	for _, e := range []dbop.Engine{dbop.EngineMariaDB, dbop.EngineMySQL} {
		tl := toolsFor(e)
		var b strings.Builder
		b.WriteString("# " + e.String() + ": the agent's backup programs, rendered by tools_test.go\n")
		type command struct {
			name string
			args []string
		}
		commands := []command{
			{"backup", tl.backupArgs("/tmp/backup-1.cnf", "/tmp/backup-1/tmp", "/tmp/backup-1/lsn")},
			{"seed backup", tl.backupArgs("/tmp/backup-1.cnf", "/tmp/backup-1", "")},
			{"unpack", tl.unpackArgs("/var/lib/mysql/data.restore")},
			{"prepare", tl.prepareArgs("/var/lib/mysql/data.restore")},
			{"scratch server without TLS", tl.noTLS},
		}
		if e == dbop.EngineMariaDB { // a restore of MySQL to a point in time is refused (replay)
			commands = append(commands,
				command{"replay a window", tl.replayArgs(backup.Step{After: "0-0-100", Stop: "0-0-150"}, "/var/lib/mysql/restore.binlog")},
				command{"replay to a time", tl.replayArgs(backup.Step{After: "0-0-100", StopTime: &at}, "/var/lib/mysql/restore.binlog")},
				command{"client", tl.clientArgs("/tmp/restore-client-1.cnf")})
		}
		for _, c := range commands {
			b.WriteString(c.name + ": " + strings.Join(c.args, " ") + "\n")
		}
		golden := filepath.Join("testdata", "tools-"+strings.ToLower(e.String())+".txt")
		if *update {
			if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%v (run with -update)", err)
		}
		if string(want) != b.String() {
			t.Errorf("%s differs (run `go test ./agent -run ToolsGolden -update` and review):\n%s", golden, b.String())
		}
	}
}
