// Package apimetrics counts the requests the manager sends to the API server
// by verb and resource, so that a platform engineer (and the benchmark) can
// see that an idle operator writes nothing and reads from its cache.
package apimetrics

import (
	"net/http"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Requests is mysql_operator_api_requests_total{verb,resource}: verbs are the
// API server's (get, list, watch, create, update, patch, apply, delete);
// resource carries the subresource as "mysqls/status".
var Requests = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "mysql_operator_api_requests_total",
	Help: "Requests the operator sent to the API server, by verb and resource.",
}, []string{"verb", "resource"})

func init() {
	ctrlmetrics.Registry.MustRegister(Requests)
}

// WrapTransport counts every request that goes through rt; set it as a
// rest.Config's WrapTransport.
func WrapTransport(rt http.RoundTripper) http.RoundTripper {
	return roundTripper{rt}
}

type roundTripper struct{ next http.RoundTripper }

func (r roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	verb, resource := Classify(req)
	Requests.WithLabelValues(verb, resource).Inc()
	return r.next.RoundTrip(req)
}

// Classify returns the API server verb and resource of a request.
func Classify(req *http.Request) (verb, resource string) {
	parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	switch {
	case len(parts) >= 2 && parts[0] == "api":
		parts = parts[2:]
	case len(parts) >= 3 && parts[0] == "apis":
		parts = parts[3:]
	default:
		return strings.ToLower(req.Method), "nonresource"
	}
	if len(parts) >= 3 && parts[0] == "namespaces" {
		parts = parts[2:]
	}
	named := len(parts) >= 2
	if len(parts) > 0 {
		resource = parts[0]
	}
	if len(parts) >= 3 {
		resource += "/" + parts[2]
	}
	switch req.Method {
	case http.MethodGet:
		switch {
		case req.URL.Query().Get("watch") == "true" || req.URL.Query().Get("watch") == "1":
			verb = "watch"
		case named:
			verb = "get"
		default:
			verb = "list"
		}
	case http.MethodPost:
		verb = "create"
	case http.MethodPut:
		verb = "update"
	case http.MethodPatch:
		verb = "patch"
		if strings.HasPrefix(req.Header.Get("Content-Type"), "application/apply-patch") {
			verb = "apply"
		}
	case http.MethodDelete:
		verb = "delete"
	default:
		verb = strings.ToLower(req.Method)
	}
	return verb, resource
}

// Mutating reports whether a verb changes state on the API server.
func Mutating(verb string) bool {
	switch verb {
	case "create", "update", "patch", "apply", "delete":
		return true
	}
	return false
}
