package agent

import (
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/example/mysql-operator/internal/scrape"
)

// scrapeOf reads the metrics the agent serves at url, parsed as
// Prometheus does.
func scrapeOf(t *testing.T, url string) scrape.Families {
	t.Helper()
	f, err := scrape.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestMetrics scrapes the agent of a real MariaDB server, read-only with
// no source as a new instance is, then writable: every metric of a server
// in that role is there with a sane value, and the queries counter grows.
func TestMetrics(t *testing.T) {
	in := startInstance(t, "metrics")
	p, err := NewProbes(in.c, 30)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(metricsHandler(&collector{db: p.db, archive: &archiver{c: in.c}}))
	t.Cleanup(srv.Close)
	url := srv.URL + "/metrics"

	got := scrapeOf(t, url)
	for _, want := range []struct {
		name   string
		labels []string
		check  func(float64) bool
	}{
		{"mysql_up", nil, func(v float64) bool { return v == 1 }},
		{"mysql_read_only", nil, func(v float64) bool { return v == 1 }},
		{"mysql_replica", nil, func(v float64) bool { return v == 0 }},
		{"mysql_semisync_source_active", nil, func(v float64) bool { return v == 0 }},
		{"mysql_semisync_source_clients", nil, func(v float64) bool { return v == 0 }},
		{"mysql_semisync_source_wait_sessions", nil, func(v float64) bool { return v == 0 }},
		{"mysql_semisync_source_acknowledged_transactions_total", nil, func(v float64) bool { return v == 0 }},
		{"mysql_semisync_source_unacknowledged_transactions_total", nil, func(v float64) bool { return v >= 0 }},
		{"mysql_semisync_replica_active", nil, func(v float64) bool { return v == 0 }},
		{"mysql_connections", nil, func(v float64) bool { return v >= 1 }},
		{"mysql_queries_total", nil, func(v float64) bool { return v > 0 }},
		{"mysql_uptime_seconds", nil, func(v float64) bool { return v >= 0 }},
		{"mysql_innodb_buffer_pool_bytes", []string{"state", "total"}, func(v float64) bool { return v >= 8<<20 }},
		{"mysql_innodb_buffer_pool_bytes", []string{"state", "free"}, func(v float64) bool { return v > 0 }},
		{"mysql_innodb_buffer_pool_bytes", []string{"state", "data"}, func(v float64) bool { return v > 0 }},
	} {
		v, ok := got.Value(want.name, want.labels...)
		if !ok || !want.check(v) {
			t.Errorf("%s%v = %v (present %t)", want.name, want.labels, v, ok)
		}
	}
	before, _ := got.Value("mysql_queries_total")
	execSQL(t, in.db(), "SET GLOBAL read_only = OFF", "CREATE DATABASE m", "CREATE TABLE m.t (n INT PRIMARY KEY)", "INSERT INTO m.t VALUES (1)")
	got = scrapeOf(t, url)
	if v, _ := got.Value("mysql_read_only"); v != 0 {
		t.Errorf("mysql_read_only of the writable server = %v", v)
	}
	if after, _ := got.Value("mysql_queries_total"); after <= before {
		t.Errorf("mysql_queries_total %v, then %v", before, after)
	}
	if _, ok := got["mysql_replica_lag_seconds"]; ok {
		t.Error("a server with no source has a replication lag")
	}
}

// TestMetricsDocumented: docs/metrics.md lists every metric the agent
// serves, and no other.
func TestMetricsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../docs/metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| `(mysql_[a-z_]+)`").FindAllStringSubmatch(string(doc), -1) {
		if strings.HasPrefix(m[1], "mysql_operator_") {
			continue // the operator's, not the agent's
		}
		documented[m[1]] = true
	}
	for _, m := range agentMetricNames {
		if !documented[m.name] {
			t.Errorf("docs/metrics.md does not list %s", m.name)
		}
		delete(documented, m.name)
	}
	for name := range documented {
		t.Errorf("docs/metrics.md lists %s, which the agent does not serve", name)
	}
}
