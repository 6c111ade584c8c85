package ctrltest

import (
	"context"
	"fmt"
	"net"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/controller/children"
	"github.com/example/mysql-operator/dbop"
	"github.com/example/mysql-operator/internal/dbtest"
)

// envtest runs no kubelet: ServePods plays the kubelet of a MySQL's pods
// with real MariaDB servers. Each pod gets a loopback address of its own,
// where a server listens on port 3306, initialised with the bootstrap SQL
// the agent would run, from the passwords in the Secrets the operator
// made. The pods are created Running and Ready (the agent's probes are
// not run here); the operator's data plane then really talks to the
// servers: it makes a primary, configures replication, labels the roles.

// loopbackNets hands out the MySQLs' address blocks: MySQL k's pod i
// listens on 127.77.k.(i+1). The test binaries of several packages run at
// once, so a block is taken across processes: by a listener on
// 127.77.k.255:3306 that the process holds until it exits, which the
// kernel gives to one process only.
var loopbackNets struct {
	sync.Mutex
	next  int
	taken []net.Listener
}

// loopbackNet takes a free address block and returns its k.
func loopbackNet(t *testing.T) int {
	t.Helper()
	loopbackNets.Lock()
	defer loopbackNets.Unlock()
	for ; loopbackNets.next < 250; loopbackNets.next++ {
		k := loopbackNets.next + 1
		l, err := net.Listen("tcp", fmt.Sprintf("127.77.%d.255:3306", k))
		if err != nil {
			continue
		}
		loopbackNets.taken = append(loopbackNets.taken, l)
		loopbackNets.next++
		return k
	}
	t.Fatal("no free loopback block 127.77.k.0/24 left")
	return 0
}

// ServePods starts the servers and pods of instances from..to-1 of the
// MySQL m, which must be of engine MariaDB.
func (e *Env) ServePods(t *testing.T, m *databasev1.MySQL, from, to int) []*dbtest.Server {
	t.Helper()
	ctx := context.Background()
	k := loopbackNet(t)
	hosts := make([]string, 0, to-from)
	for i := from; i < to; i++ {
		hosts = append(hosts, fmt.Sprintf("127.77.%d.%d", k, i+1))
	}
	servers := dbtest.Start(t, to-from, dbtest.Config{Bootstrap: e.bootstrapSQL(t, m), Hosts: hosts, FirstServerID: uint32(from + 1)})
	for n, i := 0, from; i < to; n, i = n+1, i+1 {
		labels := children.PodLabels(m)
		// The revision MarkStatefulSetReady reports: the pods are up to date.
		labels[appsv1.ControllerRevisionHashLabelKey] = "r1"
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: children.PodName(m, i), Namespace: m.Namespace, Labels: labels},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: children.ServerContainerName, Image: children.Image(m)}}}}
		if err := e.Client.Create(ctx, pod); err != nil {
			t.Fatal(err)
		}
		pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, PodIP: hosts[n], PodIPs: []corev1.PodIP{{IP: hosts[n]}},
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: children.ServerContainerName, Image: children.Image(m), Ready: true,
				State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}}}}}
		if err := e.Client.Status().Update(ctx, pod); err != nil {
			t.Fatal(err)
		}
	}
	return servers
}

// bootstrapSQL waits for the Secrets of m's passwords and renders the SQL
// the agent runs on a new data directory.
func (e *Env) bootstrapSQL(t *testing.T, m *databasev1.MySQL) string {
	t.Helper()
	read := func(name, key string) string {
		s := &corev1.Secret{}
		Eventually(t, "Secret "+name, func(ctx context.Context) (bool, error) {
			err := e.Client.Get(ctx, client.ObjectKey{Namespace: m.Namespace, Name: name}, s)
			return err == nil, client.IgnoreNotFound(err)
		})
		return string(s.Data[key])
	}
	rootName, rootKey := children.PasswordRef(m)
	operator := children.OperatorSecretName(m)
	cfg := dbop.BootstrapConfig{RootPassword: read(rootName, rootKey), AdminPassword: read(operator, children.AdminPasswordKey),
		ReplPassword: read(operator, children.ReplPasswordKey), AgentPassword: read(operator, children.AgentPasswordKey)}
	sql, err := dbop.MariaDB.Bootstrap(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return sql
}
