package apimetrics

import (
	"net/http/httptest"
	"testing"
)

func TestClassify(t *testing.T) {
	tests := []struct {
		method, url, contentType string
		verb, resource           string
	}{
		{"GET", "/api/v1/namespaces/a/secrets/db-root", "", "get", "secrets"},
		{"GET", "/api/v1/secrets?limit=500", "", "list", "secrets"},
		{"GET", "/apis/apps/v1/statefulsets?watch=true", "", "watch", "statefulsets"},
		{"PATCH", "/apis/apps/v1/namespaces/a/statefulsets/db?fieldManager=x", "application/apply-patch+yaml", "apply", "statefulsets"},
		{"PATCH", "/apis/database.example.com/v1/namespaces/a/mysqls/db/status", "application/merge-patch+json", "patch", "mysqls/status"},
		{"POST", "/apis/events.k8s.io/v1/namespaces/a/events", "", "create", "events"},
		{"DELETE", "/apis/policy/v1/namespaces/a/poddisruptionbudgets/db", "", "delete", "poddisruptionbudgets"},
		{"PUT", "/apis/coordination.k8s.io/v1/namespaces/s/leases/l", "", "update", "leases"},
		{"GET", "/api/v1/namespaces/a", "", "get", "namespaces"},
		{"GET", "/healthz", "", "get", "nonresource"},
	}
	for _, tt := range tests {
		req := httptest.NewRequest(tt.method, tt.url, nil)
		if tt.contentType != "" {
			req.Header.Set("Content-Type", tt.contentType)
		}
		verb, resource := Classify(req)
		if verb != tt.verb || resource != tt.resource {
			t.Errorf("%s %s = %s %s, want %s %s", tt.method, tt.url, verb, resource, tt.verb, tt.resource)
		}
	}
	if !Mutating("apply") || Mutating("watch") {
		t.Error("Mutating misclassifies")
	}
}
