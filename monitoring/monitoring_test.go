// Package monitoring holds the alerting rules (rules.yaml) and the Grafana
// dashboard (dashboard.json) of the mysql-operator; its tests run them
// through Prometheus's own promtool (`make prometheus` builds it into
// bin/).
package monitoring

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// promtool is Prometheus's promtool, built by `make prometheus`.
func promtool(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs("../bin/promtool")
	if err == nil {
		_, err = os.Stat(p)
	}
	if err != nil {
		t.Fatalf("promtool: %v (run make prometheus)", err)
	}
	return p
}

// run runs promtool with args and fails the test with its output if it fails.
func run(t *testing.T, args ...string) {
	t.Helper()
	out, err := exec.Command(promtool(t), args...).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// TestRules checks rules.yaml and runs its unit tests (rules_test.yaml)
// as `promtool test rules` does: each alert fires on its input series
// when it should, and not before.
func TestRules(t *testing.T) {
	run(t, "check", "rules", "rules.yaml")
	run(t, "test", "rules", "rules_test.yaml")
}

// metricName finds the names of this project's metrics in a query.
var metricName = regexp.MustCompile(`\bmysql_[a-z0-9_]+\b`)

// documented are the metric names docs/metrics.md lists: the agents' and
// the operator's.
func documented(t *testing.T) map[string]bool {
	doc, err := os.ReadFile("../docs/metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| `(mysql_[a-z0-9_]+)`").FindAllStringSubmatch(string(doc), -1) {
		names[m[1]] = true
	}
	return names
}

// dashboardQueries are the queries of every panel of dashboard.json.
func dashboardQueries(t *testing.T) []string {
	raw, err := os.ReadFile("dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range d.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, q := range p.Targets {
			out = append(out, q.Expr)
		}
	}
	return out
}

// TestDashboard: every panel's query names only metrics docs/metrics.md
// lists (the agents' and the operator's), and is PromQL Prometheus parses
// (the queries, Grafana's variables given values, checked as recording
// rules by promtool).
func TestDashboard(t *testing.T) {
	names := documented(t)
	queries := dashboardQueries(t)
	vars := strings.NewReplacer("$namespace", "shop", "$mysql", "orders", "$__rate_interval", "5m")
	type rule struct {
		Record string `json:"record"`
		Expr   string `json:"expr"`
	}
	var rules []rule
	for i, q := range queries {
		for _, n := range metricName.FindAllString(q, -1) {
			if !names[n] {
				t.Errorf("dashboard query %q names %s, which no one exports (docs/metrics.md)", q, n)
			}
		}
		rules = append(rules, rule{Record: "dashboard:query_" + string(rune('a'+i%26)) + strings.Repeat("x", i/26), Expr: vars.Replace(q)})
	}
	file, err := yaml.Marshal(map[string]any{"groups": []any{map[string]any{"name": "dashboard", "rules": rules}}})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "dashboard-queries.yaml")
	if err := os.WriteFile(path, file, 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, "check", "rules", path)
}

// TestRulesNameExportedMetrics: the alerting rules name only metrics
// docs/metrics.md lists.
func TestRulesNameExportedMetrics(t *testing.T) {
	names := documented(t)
	raw, err := os.ReadFile("rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Groups []struct {
			Rules []struct {
				Alert string `json:"alert"`
				Expr  string `json:"expr"`
			} `json:"rules"`
		} `json:"groups"`
	}
	if err := yaml.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Groups) == 0 {
		t.Fatal(errors.New("rules.yaml has no group"))
	}
	for _, g := range f.Groups {
		for _, r := range g.Rules {
			for _, n := range metricName.FindAllString(r.Expr, -1) {
				if !names[n] {
					t.Errorf("alert %s names %s, which no one exports (docs/metrics.md)", r.Alert, n)
				}
			}
		}
	}
}
