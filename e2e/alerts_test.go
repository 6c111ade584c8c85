package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/example/mysql-operator/internal/testenv"
)

// TestAlertFires: the local cluster's Prometheus scrapes the agents of a
// two-instance MySQL through Kubernetes service discovery with
// monitoring/prometheus.yaml's relabelling, and evaluates
// monitoring/rules.yaml as shipped. A row written on the replica alone (out
// of its binary log) and then on the primary breaks the replica's applier
// with a duplicate key, which the operator leaves to a human: the alert
// MySQLReplicationStopped fires for that pod once its minute has passed.
func TestAlertFires(t *testing.T) {
	if c.PrometheusURL == "" {
		t.Fatal("the cluster has no Prometheus")
	}
	ns := testenv.NewNamespace(t, c.Client)
	createMySQL(t, ns, "db", 2)
	waitCurrent(t, key(ns, "db"))
	eventually(t, "Prometheus scraping both agents", func(ctx context.Context) (bool, error) {
		var r struct {
			Data struct {
				Result []any `json:"result"`
			} `json:"data"`
		}
		err := prometheusGet(ctx, "/api/v1/query", url.Values{"query": {fmt.Sprintf(`mysql_up{namespace=%q, mysql="db"} == 1`, ns)}}, &r)
		return err == nil && len(r.Data.Result) == 2, nil
	})
	primary := getMySQL(t, ns, "db").Status.CurrentPrimary
	replica := "db-1"
	if primary == "db-1" {
		replica = "db-0"
	}
	writer := rootDB(t, ns, "db", "db-primary")
	mustExec(t, writer, "CREATE DATABASE broken")
	mustExec(t, writer, "CREATE TABLE broken.t (n INT PRIMARY KEY)")
	rdb := adminDB(t, ns, "db", replica) // the operator's account writes past read_only
	eventually(t, "the table on the replica", func(ctx context.Context) (bool, error) {
		_, err := rdb.ExecContext(ctx, "SELECT 1 FROM broken.t")
		return err == nil, nil
	})
	conn, err := rdb.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, q := range []string{"SET SESSION sql_log_bin = 0", "INSERT INTO broken.t VALUES (1)"} {
		if _, err := conn.ExecContext(context.Background(), q); err != nil {
			t.Fatal(err)
		}
	}
	mustExec(t, writer, "INSERT INTO broken.t VALUES (1)")
	broken := time.Now()
	var firing bool
	err = wait.PollUntilContextTimeout(context.Background(), 2*time.Second, 4*time.Minute, true, func(ctx context.Context) (bool, error) {
		var r struct {
			Data struct {
				Alerts []struct {
					Labels map[string]string `json:"labels"`
					State  string            `json:"state"`
				} `json:"alerts"`
			} `json:"data"`
		}
		if err := prometheusGet(ctx, "/api/v1/alerts", nil, &r); err != nil {
			return false, nil
		}
		for _, a := range r.Data.Alerts {
			l := a.Labels
			if l["alertname"] == "MySQLReplicationStopped" && l["namespace"] == ns && l["pod"] == replica && l["mysql"] == "db" {
				firing = a.State == "firing"
			}
		}
		return firing, nil
	})
	if err != nil {
		t.Fatalf("MySQLReplicationStopped never fired for %s: %v", replica, err)
	}
	t.Logf("MySQLReplicationStopped fired for %s %s after the applier broke (the rule holds 1m)", replica, time.Since(broken).Round(time.Second))
}

// prometheusGet reads a JSON answer of the cluster's Prometheus API.
func prometheusGet(ctx context.Context, path string, q url.Values, into any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.PrometheusURL+path+"?"+q.Encode(), nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", path, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(into)
}
