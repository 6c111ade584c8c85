package cluster

import (
	"strings"
	"testing"
	"time"
)

// TestProcessCPU: this process's CPU time grows while it works.
func TestProcessCPU(t *testing.T) {
	before, err := processCPU("self")
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for x := 0; ; x++ {
		now, err := processCPU("self")
		if err != nil {
			t.Fatal(err)
		}
		if now > before {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("CPU time stayed at %s", now)
		}
		_ = strings.Repeat("x", x%1000)
	}
	if _, err := processCPU("0"); err == nil {
		t.Error("read the CPU time of no process")
	}
}

// TestCPUSince: each process's time since a reading, the busiest first; a
// process restarted in between counts from its start.
func TestCPUSince(t *testing.T) {
	before := CPU{"etcd": 10 * time.Second, "manager": 50 * time.Second}
	after := CPU{"etcd": 15 * time.Second, "manager": 20 * time.Second, "kwok": time.Second}
	got := after.Since(before).String()
	if want := "manager 20s, etcd 5s, kwok 1s: 26s"; got != want {
		t.Errorf("Since = %q, want %q", got, want)
	}
	tied := CPU{"kwok": time.Second, "etcd": time.Second, "bench": time.Second}
	if got, want := tied.String(), "bench 1s, etcd 1s, kwok 1s: 3s"; got != want {
		t.Errorf("String = %q, want %q: equal times by name", got, want)
	}
}
