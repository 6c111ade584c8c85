package throughput

import (
	"reflect"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/controller/children"
	"github.com/example/mysql-operator/internal/cluster"
)

// TestParse reads sysbench 1.0.20's report.
func TestParse(t *testing.T) {
	out := `SQL statistics:
    queries performed:
        read:                            823186
        write:                           235196
        other:                           117598
        total:                           1175980
    transactions:                        58799  (979.84 per sec.)
    queries:                             1175980 (19596.77 per sec.)
Latency (ms):
         min:                                    3.01
         avg:                                    8.16
         max:                                   92.43
         95th percentile:                       11.87
         sum:                               479919.14
`
	r, err := parse(out)
	if err != nil || r.Transactions != 58799 || r.TPS != 979.84 || r.P95 != 11870*time.Microsecond {
		t.Errorf("parse = %+v, %v", r, err)
	}
	if _, err := parse("FATAL: error 2013: Lost connection"); err == nil {
		t.Error("a failed run parsed")
	}
}

// TestRelocate moves every path of the builder's my.cnf, for the spec
// measured, under a directory: the bare server runs exactly the
// operator's settings.
func TestRelocate(t *testing.T) {
	m := &databasev1.MySQL{ObjectMeta: metav1.ObjectMeta{Name: "bench", Namespace: "bench"}, Spec: Spec(1)}
	cnf := children.ConfigMap(m).Data["my.cnf"]
	out, err := relocate(cnf, "/tmp/x", 33061)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"datadir = /tmp/x/lib/data\n", "port = 33061\n", "bind_address = 127.0.0.1\n",
		"ssl_cert = /tmp/x/tls/tls.crt\n", "!include /tmp/x/run/pod.cnf", "innodb_buffer_pool_size = 512M", "sync_binlog = 1\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("the moved my.cnf has no %q:\n%s", want, out)
		}
	}
	if strings.Count(out, "\n") != strings.Count(cnf, "\n") {
		t.Error("lines were added or lost")
	}
	if _, err := relocate(cnf+"secure_file_priv = /var/lib/mysql-files\n!include /var/run/mysqld/../x\n"+
		"general_log_file = "+children.TLSMountPath+"/../log\n", "/tmp/x", 1); err != nil {
		t.Errorf("paths under the pod's directories refused: %v", err)
	}
}

// TestKubeletChain weighs and limits the bare server's cgroups as the
// kubelet does the server container of the MySQL measured: the node's
// CPUs at the top, the pod's 10m (the agent's request), the server's
// minimum of 2 shares, the pod's memory limit its two containers'.
func TestKubeletChain(t *testing.T) {
	got := kubeletChain(Spec(1))
	want := []cgroupLevel{
		{name: cgroupName, shares: cluster.NodeCPUShares()},
		{name: "burstable", shares: 10},
		{name: "pod", shares: 10, memory: 1536 << 20},
		{name: "server", shares: 2, memory: 1 << 30},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("kubeletChain = %+v, want %+v", got, want)
	}
	if f := want[3].files("cpu"); f["cpu.shares"] != 2 || len(f) != 1 {
		t.Errorf("the server's cpu files = %v", f)
	}
	if f := want[3].files(""); f["cpu.weight"] != 1 || f["memory.max"] != 1<<30 {
		t.Errorf("the server's cgroup v2 files = %v", f)
	}
}
