package e2e

import (
	"bufio"
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/example/mysql-operator/internal/testenv"
	"github.com/example/mysql-operator/plugin"
)

// TestPlugin runs `kubectl mysql` against a two-instance MySQL on the real
// node: credentials prints what logs in; login runs a query in the
// primary's pod and in a replica's, the password shown nowhere; switchover
// moves the primary while the spec (Git's) stays as it is, and the primary
// stays there; status shows it.
func TestPlugin(t *testing.T) {
	ns := testenv.NewNamespace(t, c.Client)
	createMySQL(t, ns, "db", 2)
	waitCurrent(t, key(ns, "db"))
	password := rootPasswordOf(t, ns, "db")

	cnf := kubectlMySQL(t, ns, "", "credentials", "db")
	user, pw := optionOf(cnf, "user"), optionOf(cnf, "password")
	if user != `"root"` || pw != `"`+password+`"` || optionOf(cnf, "host") != "db-primary."+ns+".svc" {
		t.Fatalf("credentials:\n%s", cnf)
	}
	openDB(t, ns, "db-primary", "root", strings.Trim(pw, `"`)) // waits until it logs in

	out := kubectlMySQL(t, ns, "SELECT 6*7 AS answer, @@read_only AS ro;\n", "login", "db")
	if !strings.Contains(out, "42\t0") || strings.Contains(out, password) {
		t.Errorf("login to the primary: %q", out)
	}
	out = kubectlMySQL(t, ns, "", "login", "db", "--replica", "--", "-N", "-e", "SELECT @@hostname, @@read_only")
	if !regexp.MustCompile(`db-\d\t1`).MatchString(out) {
		t.Errorf("login to a replica: %q", out)
	}

	before := getMySQL(t, ns, "db")
	target := "db-1"
	if before.Status.CurrentPrimary == "db-1" {
		target = "db-0"
	}
	out = kubectlMySQL(t, ns, "", "switchover", "db", "--to", target)
	if !strings.Contains(out, target+" is the primary") {
		t.Errorf("switchover: %q", out)
	}
	waitCurrent(t, key(ns, "db"))
	after := getMySQL(t, ns, "db")
	if after.Status.CurrentPrimary != target || after.Generation != before.Generation || after.Spec.PreferredPrimary != nil {
		t.Errorf("after the switchover: primary %s, generation %d (was %d), preferredPrimary %v",
			after.Status.CurrentPrimary, after.Generation, before.Generation, after.Spec.PreferredPrimary)
	}
	out = kubectlMySQL(t, ns, "", "status", "db")
	if !regexp.MustCompile(`(?m)^\S+ `+target+`\s+Primary\s`).MatchString(out) || !strings.Contains(out, "Done") {
		t.Errorf("status after the switchover:\n%s", out)
	}
}

// kubectlMySQL runs `kubectl mysql ARGS` in namespace ns with stdin, and
// returns what it printed on its standard output; a failure fails the
// test.
func kubectlMySQL(t *testing.T, ns, stdin string, args ...string) string {
	t.Helper()
	var out, errOut bytes.Buffer // apart: the two streams are copied concurrently
	cmd := plugin.NewCommand(genericiooptions.IOStreams{In: strings.NewReader(stdin), Out: &out, ErrOut: &errOut})
	cmd.SetArgs(append([]string{"--kubeconfig", c.Kubeconfig, "-n", ns}, args...))
	if err := cmd.ExecuteContext(context.Background()); err != nil {
		t.Fatalf("kubectl mysql %s: %v\n%s%s", strings.Join(args, " "), err, out.String(), errOut.String())
	}
	return out.String()
}

// optionOf is the value of key in an option file's text.
func optionOf(cnf, key string) string {
	s := bufio.NewScanner(strings.NewReader(cnf))
	for s.Scan() {
		if k, v, ok := strings.Cut(s.Text(), "="); ok && k == key {
			return v
		}
	}
	return ""
}
