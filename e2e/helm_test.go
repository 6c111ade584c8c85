package e2e

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v4/pkg/action"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/kube"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/example/mysql-operator/controller"
	"github.com/example/mysql-operator/controller/vocabulary"
	"github.com/example/mysql-operator/internal/cluster"
	"github.com/example/mysql-operator/internal/testenv"
)

// helmRelease is the release TestHelm installs; helmShard the shard its
// manager reconciles, which no MySQL of the tests is in, so that it
// leaves the other tests' MySQLs to the harness's manager.
const (
	helmRelease = "helm-e2e"
	helmShard   = vocabulary.LabelShard + "=helm-e2e"
)

// TestHelm installs the chart with Helm's SDK as `helm install --wait`
// does, the manager's image from the real node and the pod placed there:
// the manager comes up (its Deployment available, its pod ready, holding
// its shard's leader Lease, so it talks to the API server in-cluster).
// An upgrade with a changed value rolls the Deployment: a new pod with
// the new flag takes over. Uninstalling removes the manager and keeps the
// CRD (Helm never deletes what crds/ installed).
func TestHelm(t *testing.T) {
	ns := testenv.NewNamespace(t, c.Client)
	cfg := helmConfiguration(t, ns)
	ch, err := loader.Load(filepath.Join(repoRoot, "charts", "mysql-operator"))
	if err != nil {
		t.Fatal(err)
	}
	vals := helmValues()
	install := action.NewInstall(cfg)
	install.ReleaseName, install.Namespace = helmRelease, ns
	install.WaitStrategy, install.Timeout = kube.StatusWatcherStrategy, timeout
	if _, err := install.RunWithContext(context.Background(), ch, vals); err != nil {
		t.Fatalf("helm install: %v", err)
	}
	first := waitManagerLeads(t, ns, "--zap-log-level=info")

	vals["logLevel"] = "debug"
	helmUpgrade(t, cfg, ns, ch, vals)
	second := waitManagerLeads(t, ns, "--zap-log-level=debug")
	if second.UID == first.UID {
		t.Fatalf("the upgrade kept pod %s: the Deployment did not roll", first.Name)
	}

	uninstall := action.NewUninstall(cfg)
	uninstall.WaitStrategy, uninstall.Timeout = kube.StatusWatcherStrategy, timeout
	if _, err := uninstall.Run(helmRelease); err != nil {
		t.Fatalf("helm uninstall: %v", err)
	}
	eventually(t, "the manager's pods gone", func(ctx context.Context) (bool, error) {
		pods, err := managerPods(ctx, ns)
		return len(pods) == 0, err
	})
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := c.Client.Get(context.Background(), client.ObjectKey{Name: "mysqls.database.example.com"}, crd); err != nil || crd.DeletionTimestamp != nil {
		t.Errorf("the CRD after helm uninstall: %v, deleting %v; want it kept", err, crd.DeletionTimestamp)
	}
}

// helmValues are the values of the test's release: the image the real
// node has (never pulled), the pod placed on that node, the manager
// scoped to the test's shard.
func helmValues() map[string]any {
	return map[string]any{
		"image":        map[string]any{"repository": strings.Split(cluster.ManagerImage, ":")[0], "tag": "dev", "pullPolicy": "Never"},
		"nodeSelector": map[string]any{"kubernetes.io/hostname": cluster.RealNodeName},
		"tolerations":  []any{map[string]any{"key": cluster.RealNodeTaint, "operator": "Exists", "effect": "NoSchedule"}},
		"extraArgs":    []any{"--watch-label-selector=" + helmShard},
	}
}

// helmConfiguration is Helm's action configuration on the local cluster,
// releases stored as Secrets in ns, as the helm CLI does.
func helmConfiguration(t *testing.T, ns string) *action.Configuration {
	t.Helper()
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig, flags.Namespace = &c.Kubeconfig, &ns
	logger := slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})
	cfg := action.NewConfiguration(action.ConfigurationSetLogger(logger))
	if err := cfg.Init(flags, ns, "secret"); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// helmUpgrade upgrades the test's release to vals and waits, as `helm
// upgrade --wait` does.
func helmUpgrade(t *testing.T, cfg *action.Configuration, ns string, ch *chart.Chart, vals map[string]any) {
	t.Helper()
	upgrade := action.NewUpgrade(cfg)
	upgrade.Namespace = ns
	upgrade.WaitStrategy, upgrade.Timeout = kube.StatusWatcherStrategy, timeout
	if _, err := upgrade.RunWithContext(context.Background(), helmRelease, ch, vals); err != nil {
		t.Fatalf("helm upgrade: %v", err)
	}
}

// waitManagerLeads waits until the release's manager runs as one ready
// pod on the real node with flag among its arguments, and holds its
// shard's leader Lease; it returns that pod.
func waitManagerLeads(t *testing.T, ns, flag string) *corev1.Pod {
	t.Helper()
	lease := &coordinationv1.Lease{}
	leaseKey := key(ns, controller.LeaderElectionID(labels.SelectorFromSet(labels.Set{vocabulary.LabelShard: "helm-e2e"})))
	var pod *corev1.Pod
	var last string
	err := pollFor(timeout, func(ctx context.Context) (bool, error) {
		pods, err := managerPods(ctx, ns)
		if err != nil || len(pods) != 1 {
			last = fmt.Sprintf("%d manager pods", len(pods))
			return false, err
		}
		pod = &pods[0]
		args := pod.Spec.Containers[0].Args
		if !ready(pod) || pod.Spec.NodeName != cluster.RealNodeName || !slices.Contains(args, flag) {
			last = fmt.Sprintf("pod %s on %s, ready %t, args %v", pod.Name, pod.Spec.NodeName, ready(pod), args)
			return false, nil
		}
		if err := c.Client.Get(ctx, leaseKey, lease); err != nil {
			last = fmt.Sprintf("Lease %s: %v", leaseKey.Name, err)
			return false, client.IgnoreNotFound(err)
		}
		holder := ""
		if lease.Spec.HolderIdentity != nil {
			holder = *lease.Spec.HolderIdentity
		}
		last = "Lease held by " + holder
		return strings.HasPrefix(holder, pod.Name+"_"), nil
	})
	if err != nil {
		t.Fatalf("the manager up with %s and leading: %v; last seen: %s", flag, err, last)
	}
	return pod
}

// managerPods lists the pods of the release's manager Deployment that are
// not being deleted.
func managerPods(ctx context.Context, ns string) ([]corev1.Pod, error) {
	list := &corev1.PodList{}
	if err := c.Client.List(ctx, list, client.InNamespace(ns), client.MatchingLabels{"app.kubernetes.io/instance": helmRelease}); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	var out []corev1.Pod
	for _, p := range list.Items {
		if p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	return out, nil
}
