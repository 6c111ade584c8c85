package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/controller/apimetrics"
	"github.com/example/mysql-operator/internal/cluster"
	"github.com/example/mysql-operator/internal/testenv"
)

// The dev databases overlay in the test's git repository.
const (
	devMySQL         = "kustomize/overlays/dev/databases/mysql.yaml"
	devDatabases     = "kustomize/overlays/dev/databases/kustomization.yaml"
	sampleID         = "default_sample_database.example.com_MySQL"
	missingSecretRef = "  rootPasswordSecretRef:\n    name: sample-root-missing\n    key: password\n"
)

// TestFlux runs Flux's own source-controller and kustomize-controller
// against the cluster and syncs kustomize/flux/dev.yaml from a git
// repository served on loopback: the operator Kustomization, then the
// databases one, whose MySQL really runs on the real node. Commits scale
// the MySQL, make its spec unrealisable and fix it, and remove it; between
// them Flux's drift correction and the operator leave each other alone.
// The operator is the harness's manager process (the Deployment Flux
// applies is scaled to 0 by the test overlay: no registry serves its
// image). Each step needs the one before.
func TestFlux(t *testing.T) {
	env := startFluxEnv(t)
	steps := []struct {
		name string
		run  func(*testing.T, *fluxEnv)
	}{
		{"the operator, then the databases, Ready", testFluxReady},
		{"a scale commit waits for the roll-out", testFluxScale},
		{"an unrealisable spec fails fast, a fix recovers", testFluxStalled},
		{"drift correction and the operator do not fight", testFluxIdle},
		{"a commit removing the MySQL prunes it, its volumes stay", testFluxPrune},
	}
	for _, s := range steps {
		if !t.Run(s.name, func(t *testing.T) { s.run(t, env) }) {
			return
		}
	}
}

// head is the commit the test's repository is at.
func (e *fluxEnv) head(t *testing.T) string {
	t.Helper()
	sha, err := e.repo.Head()
	if err != nil {
		t.Fatal(err)
	}
	return sha
}

// commitEdit replaces old by new in path of the repository (once; it must
// be there) and commits.
func (e *fluxEnv) commitEdit(t *testing.T, path, old, new, message string) string {
	t.Helper()
	data, err := e.repo.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(string(data), old) != 1 {
		t.Fatalf("%s holds %q %d times, want once", path, old, strings.Count(string(data), old))
	}
	if err := e.repo.WriteFile(path, []byte(strings.Replace(string(data), old, new, 1))); err != nil {
		t.Fatal(err)
	}
	sha, err := e.repo.Commit(message)
	if err != nil {
		t.Fatal(err)
	}
	return sha
}

func testFluxReady(t *testing.T, e *fluxEnv) {
	ctx := context.Background()
	head := e.head(t)
	waitReadyAt(t, fluxOperator, head, timeout)
	waitReadyAt(t, fluxDatabases, head, 5*time.Minute)
	m := sample(t)
	if res := sampleKstatus(t); res.Status != status.CurrentStatus || !meta.IsStatusConditionTrue(m.Status.Conditions, "Ready") {
		t.Fatalf("the databases Kustomization is Ready, the MySQL is %s (conditions %+v)", res.Status, m.Status.Conditions)
	}
	pods := &corev1.PodList{}
	if err := c.Client.List(ctx, pods, client.InNamespace("default"), client.MatchingLabels{"app.kubernetes.io/instance": "sample"}); err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if p.Spec.NodeName != cluster.RealNodeName || p.Status.Phase != corev1.PodRunning {
			t.Errorf("pod %s on %q is %s, want Running on %s", p.Name, p.Spec.NodeName, p.Status.Phase, cluster.RealNodeName)
		}
	}
	if len(pods.Items) != 3 {
		t.Errorf("%d pods of the MySQL, want 3", len(pods.Items))
	}
	deploy := &appsv1.Deployment{}
	if err := c.Client.Get(ctx, key("mysql-operator-system", "mysql-operator-controller-manager"), deploy); err != nil {
		t.Fatalf("the manager Deployment Flux applied: %v", err)
	}
	if r := deploy.Spec.Replicas; r == nil || *r != 0 {
		t.Errorf("the manager Deployment's replicas: %v, want 0 (the test overlay's patch)", r)
	}
}

// testFluxScale commits replicas 3 -> 2: the databases Kustomization turns
// Ready at that commit only once the MySQL has rolled out to 2.
func testFluxScale(t *testing.T, e *fluxEnv) {
	commit := e.commitEdit(t, devMySQL, "replicas: 3", "replicas: 2", "Scale the sample to 2")
	checking := false
	err := pollFor(timeout, func(ctx context.Context) (bool, error) {
		s, err := kustomizationStatus(ctx, fluxDatabases)
		if err != nil {
			return false, err
		}
		st, reason, _ := s.ready()
		checking = checking || (strings.HasSuffix(s.LastAttemptedRevision, commit) && st != "True")
		if !s.readyAt(commit) {
			return false, nil
		}
		m := &databasev1.MySQL{}
		if err := c.Client.Get(ctx, key("default", "sample"), m); err != nil {
			return false, err
		}
		if m.Status.ObservedGeneration != m.Generation || m.Spec.Replicas != 2 || m.Status.ReadyReplicas != 2 {
			return false, fmt.Errorf("Ready (%s) at %.8s while the MySQL is at generation %d/%d with %d ready replicas",
				reason, commit, m.Status.ObservedGeneration, m.Generation, m.Status.ReadyReplicas)
		}
		return true, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("health check seen in progress before Ready: %v", checking)
	eventually(t, "2 running pods", func(ctx context.Context) (bool, error) {
		n, err := runningPods(ctx, "default", "sample")
		return n == 2, err
	})
}

// testFluxStalled commits a rootPasswordSecretRef to a Secret that does not
// exist: the MySQL is Stalled, and the databases Kustomization not Ready
// long before its 15m timeout, its message naming the MySQL as Failed
// (kstatus's reading of Stalled). Reverting the commit recovers both.
func testFluxStalled(t *testing.T, e *fluxEnv) {
	begin := time.Now()
	bad := e.commitEdit(t, devMySQL, "  storageSize: 1Gi\n", "  storageSize: 1Gi\n"+missingSecretRef, "Use a root Secret that does not exist")
	var last *fluxStatus
	err := pollFor(90*time.Second, func(ctx context.Context) (bool, error) {
		s, err := kustomizationStatus(ctx, fluxDatabases)
		last = s
		st, reason, _ := s.ready()
		return err == nil && strings.HasSuffix(s.LastAttemptedRevision, bad) && st == "False" && reason == "HealthCheckFailed", err
	})
	if err != nil {
		t.Fatalf("not Ready with HealthCheckFailed at %.8s within 90s: %v (last: %+v)", bad, err, last)
	}
	t.Logf("not Ready %s after the commit", time.Since(begin).Round(100*time.Millisecond))
	_, _, message := last.ready()
	if want := "MySQL/default/sample status: 'Failed'"; !strings.Contains(message, want) || !strings.Contains(message, "stalled") {
		t.Errorf("Ready message %q, want it to name %s as stalled", message, want)
	}
	m := sample(t)
	stalled := meta.FindStatusCondition(m.Status.Conditions, "Stalled")
	if stalled == nil || stalled.Status != "True" || !strings.Contains(stalled.Message, "sample-root-missing") {
		t.Errorf("the MySQL's Stalled condition: %+v, want True naming the Secret sample-root-missing", stalled)
	}
	fixed := e.commitEdit(t, devMySQL, missingSecretRef, "", "Back to the generated root Secret")
	waitReadyAt(t, fluxDatabases, fixed, timeout)
	if res := sampleKstatus(t); res.Status != status.CurrentStatus {
		t.Errorf("the MySQL after the fix: %s (%s)", res.Status, res.Message)
	}
}

// testFluxIdle watches three reconciles of the databases Kustomization,
// each a server-side apply dry-run of the MySQL against the live object:
// the MySQL's resourceVersion and generation stay put and the operator
// sends no write (its leader election's Lease renewals aside).
func testFluxIdle(t *testing.T, e *fluxEnv) {
	head := e.head(t)
	waitReadyAt(t, fluxDatabases, head, timeout)
	waitReadyAt(t, fluxUsers, head, timeout)
	m := sample(t)
	writes := operatorWrites(t)
	before := fluxReconciles(t, e, fluxDatabases)
	err := pollFor(time.Minute, func(ctx context.Context) (bool, error) {
		now := &databasev1.MySQL{}
		if err := c.Client.Get(ctx, key("default", "sample"), now); err != nil {
			return false, err
		}
		if now.ResourceVersion != m.ResourceVersion || now.Generation != m.Generation {
			return false, fmt.Errorf("the MySQL changed: resourceVersion %s -> %s, generation %d -> %d",
				m.ResourceVersion, now.ResourceVersion, m.Generation, now.Generation)
		}
		return fluxReconciles(t, e, fluxDatabases) >= before+3, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if after := operatorWrites(t); after != writes {
		t.Errorf("the operator wrote %v times during Flux's reconciles", after-writes)
	}
	// A reconcile of the databases that falls inside one of the operator
	// Kustomization's own, which says Ready Unknown while it runs, ends in
	// DependencyNotReady and is retried 5 s later: Flux's ordering, not a
	// fight (the fight would change the MySQL or make the operator write,
	// both checked above). The databases must be Ready at head again.
	waitReadyAt(t, fluxDatabases, head, timeout)
}

// testFluxPrune removes the MySQL from the overlay: Flux deletes it, and
// its data claims stay (volumeDeletionPolicy Retain, the default).
func testFluxPrune(t *testing.T, e *fluxEnv) {
	ctx := context.Background()
	claims := dataClaims(t)
	if len(claims) != 3 {
		t.Fatalf("data claims of the MySQL: %v, want 3", claims)
	}
	dropHealthChecks(t)
	if err := e.repo.RemoveFile(devMySQL); err != nil {
		t.Fatal(err)
	}
	commit := e.commitEdit(t, devDatabases, "resources:\n- mysql.yaml\n", "resources: []\n", "Remove the sample")
	eventually(t, "the MySQL pruned", func(ctx context.Context) (bool, error) {
		s, err := kustomizationStatus(ctx, fluxDatabases)
		if err != nil || !strings.HasSuffix(s.LastAttemptedRevision, commit) || s.inventoryHas(sampleID) {
			return false, err
		}
		err = c.Client.Get(ctx, key("default", "sample"), &databasev1.MySQL{})
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
	eventually(t, "the MySQL's pods gone", func(ctx context.Context) (bool, error) {
		n, err := runningPods(ctx, "default", "sample")
		return n == 0, err
	})
	for name, uid := range claims {
		pvc := &corev1.PersistentVolumeClaim{}
		if err := c.Client.Get(ctx, key("default", name), pvc); err != nil {
			t.Errorf("claim %s after the prune: %v", name, err)
			continue
		}
		if pvc.UID != uid || pvc.DeletionTimestamp != nil || pvc.Status.Phase != corev1.ClaimBound {
			t.Errorf("claim %s after the prune: uid %s (was %s), deleting %v, %s; want it kept", name, pvc.UID, uid, pvc.DeletionTimestamp, pvc.Status.Phase)
		}
	}
}

// dropHealthChecks removes the health checks of the databases and users
// Kustomizations, whose objects are the MySQL about to be removed and the
// databases, users and grants on it, as their owner would in the same
// change: otherwise a reconcile waits its whole timeout for objects that
// are gone or can no longer be Ready, and the Kustomization's own deletion
// waits behind it. It returns once Flux has reconciled the new specs.
func dropHealthChecks(t *testing.T) {
	t.Helper()
	for _, name := range []string{fluxDatabases, fluxUsers} {
		u := kustomization(name)
		patch := client.RawPatch(client.Merge.Type(), []byte(`{"spec":{"healthChecks":null}}`))
		if err := c.Client.Patch(context.Background(), u, patch); err != nil {
			t.Fatal(err)
		}
		eventually(t, "Kustomization "+name+" reconciled without health checks", func(ctx context.Context) (bool, error) {
			s, err := kustomizationStatus(ctx, name)
			return err == nil && s.ObservedGeneration == u.GetGeneration() && s.readyAt(""), err
		})
	}
}

// sample reads the MySQL default/sample.
func sample(t *testing.T) *databasev1.MySQL {
	t.Helper()
	m := &databasev1.MySQL{}
	if err := c.Client.Get(context.Background(), key("default", "sample"), m); err != nil {
		t.Fatal(err)
	}
	return m
}

// sampleKstatus computes the kstatus of the MySQL default/sample.
func sampleKstatus(t *testing.T) *status.Result {
	t.Helper()
	res, err := testenv.Kstatus(context.Background(), c.Client, key("default", "sample"))
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// dataClaims returns the UIDs of the sample's data claims, by name.
func dataClaims(t *testing.T) map[string]types.UID {
	t.Helper()
	pvcs := &corev1.PersistentVolumeClaimList{}
	if err := c.Client.List(context.Background(), pvcs, client.InNamespace("default")); err != nil {
		t.Fatal(err)
	}
	out := map[string]types.UID{}
	for _, p := range pvcs.Items {
		if strings.HasPrefix(p.Name, "data-sample-") {
			out[p.Name] = p.UID
		}
	}
	return out
}

// operatorWrites sums the manager's mutating requests but its Lease
// renewals, which leader election sends every few seconds whatever the
// MySQLs do.
func operatorWrites(t *testing.T) float64 {
	t.Helper()
	ms, err := manager.Metrics()
	if err != nil {
		t.Fatal(err)
	}
	var n float64
	for _, m := range ms["mysql_operator_api_requests_total"].GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		if apimetrics.Mutating(labels["verb"]) && labels["resource"] != "leases" {
			n += m.GetCounter().GetValue()
		}
	}
	return n
}

// fluxReconciles counts the reconciles kustomize-controller finished of
// the Kustomization name.
func fluxReconciles(t *testing.T, e *fluxEnv, name string) uint64 {
	t.Helper()
	ms, err := e.flux.Metrics(cluster.KustomizeController)
	if err != nil {
		t.Fatal(err)
	}
	return ms.Count("gotk_reconcile_duration_seconds", map[string]string{"kind": "Kustomization", "name": name})
}
