package metricsauth

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr"
	authnv1 "k8s.io/api/authentication/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/example/mysql-operator/internal/testenv"
)

// serve sends one request through the filter and returns its status.
func serve(t *testing.T, h http.Handler, method, path, token string) int {
	t.Helper()
	req := httptest.NewRequest(method, path, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code
}

var ok = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })

// TestFilter runs the filter against a real API server, as the operator's
// ServiceAccount bound only to its generated RBAC: Prometheus's
// ServiceAccount bound to the metrics-reader ClusterRole gets the metrics,
// others do not.
func TestFilter(t *testing.T) {
	env := testenv.Start(t)
	ctx := context.Background()
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, "kustomize", "rbac", "metrics_reader_role.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	reader := &rbacv1.ClusterRole{}
	if err := yaml.Unmarshal(data, reader); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Create(ctx, reader); err != nil {
		t.Fatal(err)
	}
	ns := testenv.NewNamespace(t, env.Client)
	prometheus := testenv.ServiceAccountToken(t, env.Client, ns, "prometheus")
	nobody := testenv.ServiceAccountToken(t, env.Client, ns, "nobody")
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "prometheus-metrics-reader"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "prometheus", Namespace: ns}},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: reader.Name},
	}
	if err := env.Client.Create(ctx, binding); err != nil {
		t.Fatal(err)
	}

	cfg := env.OperatorConfig(t)
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	filter, err := Filter(cfg, httpClient)
	if err != nil {
		t.Fatal(err)
	}
	h, err := filter(logr.Discard(), ok)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, method, path, token string
		want                      int
	}{
		{"no token", http.MethodGet, "/metrics", "", http.StatusUnauthorized},
		{"unknown token", http.MethodGet, "/metrics", "not-a-token", http.StatusUnauthorized},
		{"not bound", http.MethodGet, "/metrics", nobody, http.StatusForbidden},
		{"metrics reader", http.MethodGet, "/metrics", prometheus, http.StatusOK},
		{"metrics reader, again from the cache", http.MethodGet, "/metrics", prometheus, http.StatusOK},
		{"metrics reader, another verb", http.MethodPost, "/metrics", prometheus, http.StatusForbidden},
		{"metrics reader, another path", http.MethodGet, "/debug/pprof/", prometheus, http.StatusForbidden},
	}
	for _, tt := range tests {
		if got := serve(t, h, tt.method, tt.path, tt.token); got != tt.want {
			t.Errorf("%s: %s %s = %d, want %d", tt.name, tt.method, tt.path, got, tt.want)
		}
	}
}

// fakeReviewer knows one token, allowed one path, and counts its calls.
type fakeReviewer struct {
	calls int
	err   error
}

func (f *fakeReviewer) authenticate(_ context.Context, token string) (*authnv1.UserInfo, error) {
	f.calls++
	if f.err != nil {
		return nil, f.err
	}
	if token != "good" && token != "other" {
		return nil, nil
	}
	return &authnv1.UserInfo{Username: token}, nil
}

func (f *fakeReviewer) authorize(_ context.Context, user *authnv1.UserInfo, _, path string) (bool, error) {
	return user.Username == "good" && path == "/metrics", nil
}

// TestCache checks that decisions are reused for their lifetime and no
// longer, per token, and that failures to ask are not remembered.
func TestCache(t *testing.T) {
	now := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	c := &cache{entries: map[[32]byte]entry{}, now: func() time.Time { return now }}
	r := &fakeReviewer{}
	ask := func(token string) int {
		req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
		req.Header.Set("Authorization", "bearer "+token)
		status, _ := c.decide(req, r)
		return status
	}
	steps := []struct {
		name      string
		advance   time.Duration
		token     string
		want      int
		wantCalls int
	}{
		{"allowed", 0, "good", http.StatusOK, 1},
		{"allowed, cached", allowedTTL - time.Second, "good", http.StatusOK, 1},
		{"allowed, expired", time.Second, "good", http.StatusOK, 2},
		{"denied", 0, "other", http.StatusForbidden, 3},
		{"denied, cached", deniedTTL - time.Second, "other", http.StatusForbidden, 3},
		{"denied, expired", time.Second, "other", http.StatusForbidden, 4},
		{"unknown", 0, "bad", http.StatusUnauthorized, 5},
		{"unknown, cached", unauthenticatedTTL - time.Second, "bad", http.StatusUnauthorized, 5},
	}
	for _, s := range steps {
		now = now.Add(s.advance)
		if got := ask(s.token); got != s.want || r.calls != s.wantCalls {
			t.Fatalf("%s: status %d after %d reviews, want %d after %d", s.name, got, r.calls, s.want, s.wantCalls)
		}
	}
	r.err = errors.New("API server unavailable")
	if got := ask("new"); got != http.StatusInternalServerError {
		t.Fatalf("failed review: status %d, want 500", got)
	}
	r.err = nil
	if got := ask("new"); got != http.StatusUnauthorized || r.calls != 7 {
		t.Fatalf("a failed review was cached: status %d after %d reviews", got, r.calls)
	}
}
