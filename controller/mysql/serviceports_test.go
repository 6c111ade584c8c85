package mysql

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/example/mysql-operator/controller/children"
	"github.com/example/mysql-operator/internal/ctrltest"
	corev1 "k8s.io/api/core/v1"
)

func TestForeignPortOps(t *testing.T) {
	want := children.Service(ctrltest.NewMySQL("ns", "db", 1)).Spec.Ports
	port := func(name string, n int32, proto corev1.Protocol) corev1.ServicePort {
		return corev1.ServicePort{Name: name, Port: n, Protocol: proto}
	}
	cases := []struct {
		name    string
		live    []corev1.ServicePort
		patch   string
		removed []string
	}{
		{name: "the operator's port", live: []corev1.ServicePort{port("mysql", 3306, corev1.ProtocolTCP)}, patch: "null"},
		{name: "another manager's port of another name", live: []corev1.ServicePort{port("mysql", 3306, ""), port("metrics", 9104, corev1.ProtocolTCP)}, patch: "null"},
		{name: "renumbered", live: []corev1.ServicePort{port("mysql", 3307, corev1.ProtocolTCP)},
			patch:   `[{"op":"test","path":"/spec/ports/0/name","value":"mysql"},{"op":"test","path":"/spec/ports/0/port","value":3307},{"op":"remove","path":"/spec/ports/0"}]`,
			removed: []string{"mysql 3307/TCP"}},
		{name: "another protocol, after a port kept", live: []corev1.ServicePort{port("metrics", 9104, corev1.ProtocolTCP), port("mysql", 3306, corev1.ProtocolUDP)},
			patch:   `[{"op":"test","path":"/spec/ports/1/name","value":"mysql"},{"op":"test","path":"/spec/ports/1/port","value":3306},{"op":"remove","path":"/spec/ports/1"}]`,
			removed: []string{"mysql 3306/UDP"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ops, removed := foreignPortOps(c.live, want)
			got, err := json.Marshal(ops)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != c.patch {
				t.Errorf("patch:\n got %s\nwant %s", got, c.patch)
			}
			if !slices.Equal(removed, c.removed) {
				t.Errorf("removed %q, want %q", removed, c.removed)
			}
		})
	}
}
