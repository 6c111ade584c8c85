package e2e

import (
	"context"
	"crypto/tls"
	"io"
	"net/http"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/example/mysql-operator/internal/testenv"
)

// TestSecureMetrics runs a manager with its metrics served as the
// Deployment serves them (HTTPS, authenticated and authorized) and scrapes
// it as Prometheus would: a ServiceAccount bound to the metrics-reader
// ClusterRole of the install gets the metrics; no token, or a token without
// the binding, gets nothing.
func TestSecureMetrics(t *testing.T) {
	ctx := context.Background()
	ns := testenv.NewNamespace(t, c.Client)
	prometheus := testenv.ServiceAccountToken(t, c.Client, ns, "prometheus")
	nobody := testenv.ServiceAccountToken(t, c.Client, ns, "nobody")
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "prometheus-" + ns},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "prometheus", Namespace: ns}},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "mysql-operator-metrics-reader"},
	}
	if err := c.Client.Create(ctx, binding); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Client.Delete(context.Background(), binding) })

	// A standby (leader election is on and the lease is held): it serves
	// metrics but does not reconcile.
	m, err := c.StartManager(ctx, "manager-metrics", managerBin, "--leader-elect", "--metrics-secure=true")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Stop)
	url := strings.Replace(m.MetricsURL, "http://", "https://", 1)
	// The manager serves a self-signed certificate, as in the Deployment.
	scraper := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	scrape := func(token string) (int, string, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return 0, "", err
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := scraper.Do(req)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body), err
	}
	// The metrics server may start listening after the health probe answers.
	var code int
	eventually(t, "the metrics endpoint to answer", func(context.Context) (bool, error) {
		var err error
		code, _, err = scrape("")
		return err == nil, nil
	})
	if code != http.StatusUnauthorized {
		t.Errorf("no token: %d, want 401", code)
	}
	if code, _, err := scrape(nobody); err != nil || code != http.StatusForbidden {
		t.Errorf("token without the metrics-reader binding: %d (%v), want 403", code, err)
	}
	code, body, err := scrape(prometheus)
	if err != nil {
		t.Fatal(err)
	}
	// A standby has not started the controller, but counts its requests.
	if code != http.StatusOK || !strings.Contains(body, "mysql_operator_api_requests_total") {
		t.Errorf("metrics reader: %d, want 200 with the operator's metrics; body starts %.200q", code, body)
	}
}
