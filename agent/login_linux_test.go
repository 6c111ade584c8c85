package agent

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/example/mysql-operator/login"
)

// TestLogin logs in to a real server with `agent login`'s code, a
// password holding a quote, '#', a space and a backslash sent on its
// standard input: the client runs the query as the user.
func TestLogin(t *testing.T) {
	if socket := os.Getenv("AGENT_LOGIN_SOCKET"); socket != "" {
		// The child: become the client, as `agent login` does.
		err := Login(Config{Socket: socket}, "root", []string{"-N", "-e", "SELECT CURRENT_USER(), 6*7"})
		t.Fatalf("login: %v", err)
	}
	in := startInstance(t, `#a s\w`)
	cmd := exec.Command(os.Args[0], "-test.run=^TestLogin$")
	cmd.Env = append(os.Environ(), "AGENT_LOGIN_SOCKET="+in.c.Socket)
	cmd.Stdin = strings.NewReader(in.pw.RootPassword + "\n")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("login: %v: %s", err, out)
	}
	got := string(out)
	if !strings.HasPrefix(got, login.Ready) || !strings.Contains(got, "root@localhost\t42") {
		t.Errorf("output %q", got)
	}
	if strings.Contains(got, in.pw.RootPassword) {
		t.Error("the password was shown")
	}
}
