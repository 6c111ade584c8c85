package cluster

import (
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/client-go/rest"

	"github.com/example/mysql-operator/controller/apimetrics"
)

// Metrics are the Prometheus metric families a manager exposes.
type Metrics map[string]*dto.MetricFamily

// Metrics scrapes the manager's metrics endpoint.
func (m *Manager) Metrics() (Metrics, error) {
	return scrape(m.Name, m.MetricsURL)
}

// loopbackClient reads the harness's own components on loopback, whose
// serving certificates are self-signed: as waitHTTP, it checks none.
var loopbackClient = &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}

// scrape reads the Prometheus metrics of the component name at url.
func scrape(name, url string) (Metrics, error) {
	return scrapeWith(loopbackClient, name, url)
}

// scrapeWith is scrape with the HTTP client hc.
func scrapeWith(hc *http.Client, name, url string) (Metrics, error) {
	resp, err := hc.Get(url)
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", name, err)
	}
	defer resp.Body.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	ms, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", name, err)
	}
	return ms, nil
}

// LiveHeap forces garbage collections in the manager and returns the bytes
// of Go heap still allocated: what it keeps, without the garbage a
// heap-in-use figure counts until the next collection. It collects twice:
// objects parked in sync.Pools survive one collection.
func (m *Manager) LiveHeap() (uint64, error) {
	for range 2 {
		if err := m.Profile("heap?gc=1", io.Discard); err != nil {
			return 0, fmt.Errorf("collect %s: %w", m.Name, err)
		}
	}
	ms, err := m.Metrics()
	if err != nil {
		return 0, err
	}
	return uint64(ms.Sum("go_memstats_heap_alloc_bytes", nil)), nil
}

// matches reports whether a metric has every label of want.
func matches(m *dto.Metric, want map[string]string) bool {
	n := 0
	for _, l := range m.GetLabel() {
		if v, ok := want[l.GetName()]; ok && v == l.GetValue() {
			n++
		}
	}
	return n == len(want)
}

// Sum adds up a counter or gauge over the series carrying the given labels.
func (ms Metrics) Sum(name string, labels map[string]string) float64 {
	var sum float64
	for _, m := range ms[name].GetMetric() {
		if !matches(m, labels) {
			continue
		}
		sum += m.GetCounter().GetValue() + m.GetGauge().GetValue()
	}
	return sum
}

// Count adds up the observations of a histogram over the series carrying
// the given labels.
func (ms Metrics) Count(name string, labels map[string]string) uint64 {
	var n uint64
	for _, m := range ms[name].GetMetric() {
		if matches(m, labels) {
			n += m.GetHistogram().GetSampleCount()
		}
	}
	return n
}

// HistogramSum adds up the sums of a histogram's observations over the
// series carrying the given labels.
func (ms Metrics) HistogramSum(name string, labels map[string]string) float64 {
	var sum float64
	for _, m := range ms[name].GetMetric() {
		if matches(m, labels) {
			sum += m.GetHistogram().GetSampleSum()
		}
	}
	return sum
}

// Quantile estimates a quantile of a histogram over the series carrying the
// given labels, interpolating linearly within a bucket as Prometheus does.
func (ms Metrics) Quantile(name string, labels map[string]string, q float64) time.Duration {
	counts := map[float64]float64{}
	var total float64
	for _, m := range ms[name].GetMetric() {
		if !matches(m, labels) {
			continue
		}
		for _, b := range m.GetHistogram().GetBucket() {
			counts[b.GetUpperBound()] += float64(b.GetCumulativeCount())
		}
		total += float64(m.GetHistogram().GetSampleCount())
	}
	if total == 0 {
		return 0
	}
	bounds := make([]float64, 0, len(counts))
	for b := range counts {
		bounds = append(bounds, b)
	}
	sort.Float64s(bounds)
	rank, lower, below := q*total, 0.0, 0.0
	for _, b := range bounds {
		if counts[b] >= rank {
			frac := (rank - below) / max(counts[b]-below, 1)
			return time.Duration((lower + (b-lower)*frac) * float64(time.Second))
		}
		lower, below = b, counts[b]
	}
	return time.Duration(lower * float64(time.Second))
}

// Memory reads the peak and current resident set size of the manager
// process from /proc, in bytes.
func (m *Manager) Memory() (peak, current uint64, err error) {
	pid := m.process().cmd.Process.Pid
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		kb, _ := strconv.ParseUint(f[1], 10, 64)
		switch f[0] {
		case "VmHWM:":
			peak = kb * 1024
		case "VmRSS:":
			current = kb * 1024
		}
	}
	return peak, current, nil
}

// Profile writes the manager's Go profile named by query (as
// /debug/pprof/ takes it: "heap", "profile?seconds=30", "allocs") to w.
func (m *Manager) Profile(query string, w io.Writer) error {
	return download(http.DefaultClient, "profile "+m.Name, m.pprofURL+"/"+query, w)
}

// download copies the body of a GET of url with hc to w; what names the
// download in errors ("profile manager").
func download(hc *http.Client, what, url string, w io.Writer) error {
	resp, err := hc.Get(url)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", what, resp.Status)
	}
	_, err = io.Copy(w, resp.Body)
	return err
}

// SchedulingAttempts reads kube-scheduler's scheduler_schedule_attempts_total:
// how many times it tried to schedule a pod, by result (scheduled,
// unschedulable, error). Its metrics are served on loopback without
// authentication, to this harness only.
func (c *Cluster) SchedulingAttempts() (map[string]float64, error) {
	ms, err := c.ComponentMetrics("kube-scheduler")
	if err != nil {
		return nil, err
	}
	attempts := map[string]float64{}
	for _, result := range []string{"scheduled", "unschedulable", "error"} {
		attempts[result] = ms.Sum("scheduler_schedule_attempts_total", map[string]string{"result": result})
	}
	return attempts, nil
}

// ComponentMetrics scrapes kube-scheduler's or kube-controller-manager's
// metrics, which the harness serves on loopback without authentication.
func (c *Cluster) ComponentMetrics(name string) (Metrics, error) {
	return scrape(name, fmt.Sprintf("https://127.0.0.1:%d/metrics", c.ports[name]))
}

// Backlog says what waits in the control plane: the deepest work queues of
// kube-controller-manager's controllers (workqueue_depth), the pods
// kube-scheduler has yet to place (scheduler_pending_pods) and is binding,
// their claims' binding included (scheduler_goroutines), and the requests
// kube-apiserver's priority and fairness holds in its queues
// (apiserver_flowcontrol_current_inqueue_requests), by priority level,
// the deepest first and only those not empty. The benchmark logs it with
// its progress, to tell a converge standing still on a controller from one
// standing still on the API server.
func (c *Cluster) Backlog() (string, error) {
	kcm, err := c.ComponentMetrics("kube-controller-manager")
	if err != nil {
		return "", err
	}
	sched, err := c.ComponentMetrics("kube-scheduler")
	if err != nil {
		return "", err
	}
	api, err := c.scrapeAPIServer()
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("queues %s; scheduler pending %s, binding %.0f; API server queued %s",
		kcm.deepest("workqueue_depth", "name", 4), sched.deepest("scheduler_pending_pods", "queue", 3),
		sched.Sum("scheduler_goroutines", map[string]string{"operation": "binding"}),
		api.deepest("apiserver_flowcontrol_current_inqueue_requests", "priority_level", 3)), nil
}

// deepest lists the n series of the gauge name with the highest values,
// by their label key, leaving out zeros: "statefulset 120, endpoint 3".
func (ms Metrics) deepest(name, key string, n int) string {
	type series struct {
		label string
		value float64
	}
	var all []series
	for _, m := range ms[name].GetMetric() {
		if v := m.GetGauge().GetValue(); v > 0 {
			for _, l := range m.GetLabel() {
				if l.GetName() == key {
					all = append(all, series{l.GetValue(), v})
				}
			}
		}
	}
	if len(all) == 0 {
		return "none"
	}
	sort.Slice(all, func(i, j int) bool { return all[i].value > all[j].value })
	parts := make([]string, 0, n)
	for _, s := range all[:min(n, len(all))] {
		parts = append(parts, fmt.Sprintf("%s %.0f", s.label, s.value))
	}
	return strings.Join(parts, ", ")
}

// scrapeAPIServer reads kube-apiserver's metrics as the cluster's admin.
func (c *Cluster) scrapeAPIServer() (Metrics, error) {
	hc, err := rest.HTTPClientFor(c.Config)
	if err != nil {
		return nil, err
	}
	return scrapeWith(hc, "kube-apiserver", c.Config.Host+"/metrics")
}

// apiVerbs names the API server's HTTP verbs as clients name them.
var apiVerbs = map[string]string{"POST": "create", "PUT": "update"}

// APIWrites reads kube-apiserver's apiserver_request_total: the writes it
// has served, from every client, by verb and resource ("update
// statefulsets/status"). The benchmark compares them per MySQL between
// the floor and the converge: what the control plane did more with the
// operator than without.
func (c *Cluster) APIWrites() (map[string]float64, error) {
	ms, err := c.scrapeAPIServer()
	if err != nil {
		return nil, err
	}
	writes := map[string]float64{}
	for _, m := range ms["apiserver_request_total"].GetMetric() {
		l := map[string]string{}
		for _, p := range m.GetLabel() {
			l[p.GetName()] = p.GetValue()
		}
		verb := apiVerbs[l["verb"]]
		if verb == "" {
			verb = strings.ToLower(l["verb"])
		}
		if !apimetrics.Mutating(verb) {
			continue
		}
		resource := l["resource"]
		if l["subresource"] != "" {
			resource += "/" + l["subresource"]
		}
		writes[verb+" "+resource] += m.GetCounter().GetValue()
	}
	return writes, nil
}

// APIServerProfile writes kube-apiserver's Go profile named by query (as
// /debug/pprof/ takes it: "profile?seconds=60") to w: where the API
// server's CPU goes, the converge's bottleneck.
func (c *Cluster) APIServerProfile(query string, w io.Writer) error {
	hc, err := rest.HTTPClientFor(c.Config)
	if err != nil {
		return err
	}
	return download(hc, "profile kube-apiserver", c.Config.Host+"/debug/pprof/"+query, w)
}
