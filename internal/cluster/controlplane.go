package cluster

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/example/mysql-operator/internal/testenv"
)

// startEtcd starts etcd on loopback, without fsync: the cluster is disposable.
func (c *Cluster) startEtcd(ctx context.Context) error {
	clientURL := fmt.Sprintf("http://127.0.0.1:%d", c.ports["etcd-client"])
	peer := fmt.Sprintf("http://127.0.0.1:%d", c.ports["etcd-peer"])
	if err := c.startProcess("etcd", "etcd",
		"--name=default", "--data-dir="+filepath.Join(c.Dir, "etcd"),
		"--listen-client-urls="+clientURL, "--advertise-client-urls="+clientURL,
		"--listen-peer-urls="+peer, "--initial-advertise-peer-urls="+peer,
		"--initial-cluster=default="+peer, "--unsafe-no-fsync=true", "--log-level=warn"); err != nil {
		return err
	}
	return waitHTTP(ctx, c.procs["etcd"], clientURL+"/health", nil)
}

// startAPIServer starts kube-apiserver with token authentication and RBAC,
// and makes the admin client once it is ready.
func (c *Cluster) startAPIServer(ctx context.Context) error {
	pki := filepath.Join(c.Dir, "pki")
	if err := c.startProcess("kube-apiserver", "kube-apiserver",
		"--etcd-servers="+fmt.Sprintf("http://127.0.0.1:%d", c.ports["etcd-client"]),
		"--bind-address="+c.apiAddress(), "--advertise-address="+c.apiAddress(),
		"--secure-port="+strconv.Itoa(c.ports["kube-apiserver"]),
		"--cert-dir="+pki,
		"--token-auth-file="+filepath.Join(pki, "tokens.csv"),
		"--authorization-mode=RBAC",
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-key-file="+filepath.Join(pki, "sa.pub"),
		"--service-account-signing-key-file="+filepath.Join(pki, "sa.key"),
		"--service-cluster-ip-range="+c.serviceCIDR(),
		"--endpoint-reconciler-type="+c.endpointReconciler(),
		"--allow-privileged=true",
		// kubectl logs and exec: reach the kubelet at the node's
		// address; the node's name resolves nowhere.
		"--kubelet-preferred-address-types=InternalIP"); err != nil {
		return err
	}
	if err := waitHTTP(ctx, c.procs["kube-apiserver"], c.Config.Host+"/readyz", c.Config); err != nil {
		return err
	}
	cl, err := client.New(c.Config, client.Options{Scheme: testenv.Scheme})
	if err != nil {
		return err
	}
	c.Client = cl
	return nil
}

// startControllerManager starts every built-in controller.
func (c *Cluster) startControllerManager(ctx context.Context) error {
	pki := filepath.Join(c.Dir, "pki")
	port := c.ports["kube-controller-manager"]
	if err := c.startProcess("kube-controller-manager", "kube-controller-manager",
		"--kubeconfig="+c.Kubeconfig, "--leader-elect=false", "--controllers=*",
		"--service-account-private-key-file="+filepath.Join(pki, "sa.key"),
		"--root-ca-file="+filepath.Join(pki, "apiserver.crt"),
		"--bind-address=127.0.0.1", "--secure-port="+strconv.Itoa(port),
		// /metrics too: the benchmark logs its work queues (Backlog).
		"--authentication-skip-lookup=true", "--authorization-always-allow-paths=/healthz,/metrics",
		"--concurrent-statefulset-syncs=10", "--concurrent-gc-syncs=20"); err != nil {
		return err
	}
	return waitHTTP(ctx, c.procs["kube-controller-manager"], fmt.Sprintf("https://127.0.0.1:%d/healthz", port), nil)
}

// startScheduler starts kube-scheduler.
func (c *Cluster) startScheduler(ctx context.Context) error {
	port := c.ports["kube-scheduler"]
	if err := c.startProcess("kube-scheduler", "kube-scheduler",
		"--kubeconfig="+c.Kubeconfig, "--leader-elect=false",
		"--bind-address=127.0.0.1", "--secure-port="+strconv.Itoa(port),
		// /metrics too: the benchmark reads how often it tried to
		// schedule a pod (SchedulingAttempts).
		"--authentication-skip-lookup=true", "--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics"); err != nil {
		return err
	}
	return waitHTTP(ctx, c.procs["kube-scheduler"], fmt.Sprintf("https://127.0.0.1:%d/healthz", port), nil)
}

// apiAddress is where the API server listens: loopback, or the host end of
// the real node's veth, the one address both the host and the node reach.
func (c *Cluster) apiAddress() string {
	if c.net != nil {
		return c.net.HostIP()
	}
	return "127.0.0.1"
}

// endpointReconciler is how the API server keeps the kubernetes Service's
// endpoints: with a real node at its address on the node network, so that
// pods reach it in-cluster (the manager run as a Deployment); without one,
// none, since its loopback address is no valid endpoint.
func (c *Cluster) endpointReconciler() string {
	if c.net != nil {
		return "lease"
	}
	return "none"
}

// serviceCIDR is the range of Service ClusterIPs; with a real node, one
// the host routes to the node.
func (c *Cluster) serviceCIDR() string {
	if c.net != nil {
		return c.net.ServiceCIDR()
	}
	return "10.96.0.0/16"
}
