package plugin

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/internal/golden"
)

// now is the time of the golden files.
var now = time.Date(2026, 12, 6, 23, 30, 0, 0, time.UTC)

// sample is a three-instance MySQL after a failover and a switchover,
// one replica broken.
func sample() *databasev1.MySQL {
	at := func(d time.Duration) metav1.Time { return metav1.NewTime(now.Add(-d)) }
	return &databasev1.MySQL{
		ObjectMeta: metav1.ObjectMeta{Name: "orders", Namespace: "shop"},
		Spec:       databasev1.MySQLSpec{Replicas: 3, Engine: databasev1.EngineMariaDB, Version: "10.11"},
		Status: databasev1.MySQLStatus{
			CurrentPrimary: "orders-1",
			Instances: []databasev1.InstanceStatus{
				{Name: "orders-0", Role: databasev1.RoleReplica, Ready: true, GTIDExecuted: "0-2-1042", LagSeconds: ptr.To[int64](0)},
				{Name: "orders-1", Role: databasev1.RolePrimary, Ready: true, GTIDExecuted: "0-2-1042"},
				{Name: "orders-2", Role: databasev1.RoleReplica, Message: "replication stopped: Error 1062", GTIDExecuted: "0-1-977,1-3-5"},
			},
			LastFailover: &databasev1.PrimaryChange{From: "orders-0", To: "orders-2", Time: at(2 * time.Hour)},
			Switchover: &databasev1.SwitchoverStatus{Request: "orders-1@2026-12-06T23:00:00Z", Result: databasev1.SwitchoverDone,
				Message: "orders-1 is the primary", Time: at(29 * time.Minute)},
			TLS: &databasev1.TLSStatus{NotAfter: metav1.NewTime(now.Add(80 * 24 * time.Hour)), CARotation: databasev1.CARotationTrust},
			Conditions: []metav1.Condition{{Type: databasev1.ConditionReady, Status: metav1.ConditionFalse, Reason: "DatabaseProgressing",
				Message: "instance orders-2: replication stopped: Error 1062"}},
		},
	}
}

// TestRenderStatus renders a MySQL's tree into testdata/status.txt
// (`go test ./plugin -run RenderStatus -update` rewrites it).
func TestRenderStatus(t *testing.T) {
	b := &databasev1.MySQLBackup{ObjectMeta: metav1.ObjectMeta{Name: "orders-20261206-2200"}, Status: databasev1.MySQLBackupStatus{
		Phase: databasev1.BackupComplete, CompletionTime: ptr.To(metav1.NewTime(now.Add(-90 * time.Minute))),
		Instance: "orders-0", Size: "118 MiB", GTID: "0-2-1001"}}
	var out bytes.Buffer
	if err := renderStatus(&out, sample(), b, now); err != nil {
		t.Fatal(err)
	}
	none := sample()
	none.Status = databasev1.MySQLStatus{}
	if err := renderStatus(&out, none, nil, now); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "testdata/status.txt", out.String(), "go test ./plugin -run RenderStatus")
}

// TestOptionFile renders credentials into testdata/credentials.cnf.
func TestOptionFile(t *testing.T) {
	got, err := optionFile(sample(), "root", `pa#ss "w"`)
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "testdata/credentials.cnf", got, "go test ./plugin -run OptionFile")
}

// TestPodToLogIn picks the pod a login goes to.
func TestPodToLogIn(t *testing.T) {
	m := sample()
	for _, tc := range []struct {
		instance string
		replica  bool
		want     string
	}{{"", false, "orders-1"}, {"", true, "orders-0"}, {"2", false, "orders-2"}, {"orders-2", true, "orders-2"}, {"3", false, ""}, {"other-0", false, ""}} {
		got, err := podToLogIn(m, tc.instance, tc.replica)
		if got != tc.want || (err != nil) != (tc.want == "") {
			t.Errorf("podToLogIn(%q, %v) = %q, %v; want %q", tc.instance, tc.replica, got, err, tc.want)
		}
	}
	m.Status.Instances[0].Ready = false
	if _, err := podToLogIn(m, "", true); err == nil {
		t.Error("a replica chosen with none ready")
	}
}

// TestMarkWriter takes the agent's mark out of the output, wherever the
// writes split it, and lets the password go only after it.
func TestMarkWriter(t *testing.T) {
	stream := "Warning: x\n" + "[mark]" + "Welcome\n"
	for split := 1; split < len(stream); split++ {
		var out bytes.Buffer
		w := &markWriter{w: &out, mark: []byte("[mark]"), seen: make(chan struct{})}
		in := &afterMark{seen: w.seen, first: []byte("pw\n"), rest: strings.NewReader("SELECT 1;\n")}
		if _, err := w.Write([]byte(stream[:split])); err != nil {
			t.Fatal(err)
		}
		select {
		case <-w.seen:
			if split < len("Warning: x\n[mark]") {
				t.Fatalf("split %d: seen before the whole mark", split)
			}
		default:
		}
		if _, err := w.Write([]byte(stream[split:])); err != nil {
			t.Fatal(err)
		}
		if out.String() != "Warning: x\nWelcome\n" {
			t.Fatalf("split %d: shown %q", split, out.String())
		}
		if got, _ := io.ReadAll(in); string(got) != "pw\nSELECT 1;\n" {
			t.Fatalf("split %d: sent %q", split, got)
		}
	}
}
