package cluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"sigs.k8s.io/yaml"

	"github.com/example/mysql-operator/internal/testenv"
)

// The real node's Prometheus: Prometheus 3 (`make prometheus`) on the
// host, scraping the database pods' agents as monitoring/prometheus.yaml
// says, through Kubernetes service discovery against the cluster's API
// server, and evaluating monitoring/rules.yaml. It scrapes and evaluates
// every 2 s, so that a test sees a rule fire within its `for` and a few
// seconds.

// scrapeEvery is the Prometheus's scrape and evaluation interval.
const scrapeEvery = "2s"

// startPrometheus starts Prometheus on a free loopback port.
func (c *Cluster) startPrometheus(ctx context.Context) error {
	dir := filepath.Join(c.Dir, "prometheus")
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o700); err != nil {
		return err
	}
	config, err := c.prometheusConfig(dir)
	if err != nil {
		return err
	}
	port, err := testenv.FreePort()
	if err != nil {
		return err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	if err := c.startProcess("prometheus", "prometheus", "--config.file="+config, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--storage.tsdb.retention.time=1d"); err != nil {
		return err
	}
	c.PrometheusURL = "http://" + addr
	return waitHTTP(ctx, c.procs["prometheus"], c.PrometheusURL+"/-/ready", nil)
}

// prometheusConfig writes, into dir, monitoring/prometheus.yaml with the
// cluster's kubeconfig for service discovery, the intervals, and the
// rules file beside it.
func (c *Cluster) prometheusConfig(dir string) (string, error) {
	root, err := testenv.RepoRoot()
	if err != nil {
		return "", err
	}
	raw, err := os.ReadFile(filepath.Join(root, "monitoring", "prometheus.yaml"))
	if err != nil {
		return "", err
	}
	var cfg map[string]any
	if err := yaml.Unmarshal(raw, &cfg); err != nil {
		return "", fmt.Errorf("monitoring/prometheus.yaml: %w", err)
	}
	scrapes, _ := cfg["scrape_configs"].([]any)
	for _, s := range scrapes {
		sc, _ := s.(map[string]any)
		sds, _ := sc["kubernetes_sd_configs"].([]any)
		for _, sd := range sds {
			if m, ok := sd.(map[string]any); ok {
				m["kubeconfig_file"] = c.Kubeconfig
			}
		}
	}
	cfg["global"] = map[string]any{"scrape_interval": scrapeEvery, "evaluation_interval": scrapeEvery}
	cfg["rule_files"] = []any{filepath.Join(root, "monitoring", "rules.yaml")}
	out, err := yaml.Marshal(cfg)
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "prometheus.yaml")
	return path, os.WriteFile(path, out, 0o600)
}
