package agent

import (
	"context"
	"log/slog"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/example/mysql-operator/dbop"
)

// TestFenceDue: only a primary out of contact for the whole grace fences;
// anything else is in contact now, and a grace of 0 never fences.
func TestFenceDue(t *testing.T) {
	t0 := time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC)
	const after = 3 * time.Second
	cases := []struct {
		name                          string
		primary, reached, everReached bool
		now                           time.Duration // after t0, the last contact
		after                         time.Duration
		wantLast                      time.Duration
		wantFence                     bool
	}{
		{"a replica, reaching nothing", false, false, true, 10 * time.Second, after, 10 * time.Second, false},
		{"a primary in contact", true, true, true, 10 * time.Second, after, 10 * time.Second, false},
		{"a primary cut for less than the grace", true, false, true, 2900 * time.Millisecond, after, 0, false},
		{"a primary cut for the grace", true, false, true, after, after, 0, true},
		{"a primary cut for long", true, false, true, time.Minute, after, 0, true},
		{"a primary that never reached a contact", true, false, false, time.Minute, after, time.Minute, false},
		{"fencing off", true, false, true, time.Minute, 0, time.Minute, false},
	}
	for _, tt := range cases {
		last, fence := fenceDue(tt.primary, tt.reached, tt.everReached, t0, t0.Add(tt.now), tt.after)
		if !last.Equal(t0.Add(tt.wantLast)) || fence != tt.wantFence {
			t.Errorf("%s: last contact +%s, fence %t; want +%s, %t", tt.name, last.Sub(t0), fence, tt.wantLast, tt.wantFence)
		}
	}
}

// TestFencer runs a real primary with semi-sync and a real replica
// streaming from it, and the primary's fencer on the agent's own account:
// while the replica answers, or the API server does, nothing is fenced
// however long; once neither answers (the replica's sender still listed,
// as after a network cut), the primary is fenced after the grace, once;
// a fencer that never reached a contact never fences, nor does the
// replica's own.
func TestFencer(t *testing.T) {
	ctx := context.Background()
	prim, repl := startInstance(t, "p"), startInstance(t, "r")
	if err := admin(t, prim).Promote(ctx, 1); err != nil {
		t.Fatal(err)
	}
	replica := admin(t, repl)
	// Two single servers both start as server 1.
	if _, err := repl.db().ExecContext(ctx, "SET GLOBAL server_id = 2"); err != nil {
		t.Fatal(err)
	}
	src := dbop.Source{Host: "127.0.0.1", Port: prim.server.Port, User: dbop.ReplUser, Password: prim.pw.ReplPassword}
	if err := replica.ConfigureReplica(ctx, src, true); err != nil {
		t.Fatal(err)
	}
	if err := replica.StartReplica(ctx); err != nil {
		t.Fatal(err)
	}
	crashes := 0
	f := testFencer(t, prim, func() error { crashes++; return nil })
	f.peerPort = strconv.Itoa(repl.server.Port)
	waitFor(t, "the replica's sender listed", func() bool {
		addrs, err := f.contacts(ctx)
		return err == nil && len(addrs) == 1 && addrs[0] == repl.server.Addr()
	})
	t0 := time.Now()
	f.lastContact = t0
	f.check(ctx, t0.Add(10*time.Second))
	if crashes != 0 || !f.lastContact.Equal(t0.Add(10*time.Second)) {
		t.Fatalf("with the replica answering: %d crashes, last contact +%s", crashes, f.lastContact.Sub(t0))
	}
	// The replica answers nowhere now (its sender is still listed).
	f.peerPort = closedPort(t)
	api := listen(t)
	f.apiServer = api.Addr().String()
	f.check(ctx, t0.Add(20*time.Second))
	if crashes != 0 || !f.lastContact.Equal(t0.Add(20*time.Second)) {
		t.Fatalf("with the API server answering: %d crashes, last contact +%s", crashes, f.lastContact.Sub(t0))
	}
	_ = api.Close()
	for _, at := range []time.Duration{21 * time.Second, 22900 * time.Millisecond} {
		if f.check(ctx, t0.Add(at)); crashes != 0 {
			t.Fatalf("fenced %s into a cut of 3s", at-20*time.Second)
		}
	}
	f.check(ctx, t0.Add(23*time.Second))
	if crashes != 1 {
		t.Fatalf("%d crashes after a cut of the grace, want 1", crashes)
	}
	f.check(ctx, t0.Add(24*time.Second))
	if crashes != 1 {
		t.Fatalf("%d crashes a second after fencing, want still 1", crashes)
	}
	// A fencer that never reached any contact (a network that forbids
	// these connections) cannot tell a cut and never fences.
	blind := testFencer(t, prim, func() error { t.Error("a fencer that never reached a contact fenced"); return nil })
	blind.peerPort, blind.lastContact = closedPort(t), t0
	blind.check(ctx, t0.Add(time.Minute))
	r := testFencer(t, repl, func() error { t.Error("the replica was fenced"); return nil })
	r.lastContact = t0
	r.check(ctx, t0.Add(time.Minute))
	// A replica's agent learns its contacts are allowed from the API
	// server; made primary and cut off at once, before it reached any of
	// its replicas as a primary (a switchover, then the cut), it fences.
	api = listen(t)
	promoted := 0
	late := testFencer(t, repl, func() error { promoted++; return nil })
	late.apiServer, late.peerPort = api.Addr().String(), closedPort(t)
	late.check(ctx, t0)
	if !late.everReached {
		t.Fatal("a replica's agent did not learn its contacts from the API server")
	}
	_ = api.Close()
	if err := replica.StopReplica(ctx); err != nil {
		t.Fatal(err)
	}
	if err := replica.ResetReplica(ctx); err != nil {
		t.Fatal(err)
	}
	if err := replica.Promote(ctx, 1); err != nil {
		t.Fatal(err)
	}
	late.check(ctx, t0.Add(time.Second))
	late.check(ctx, t0.Add(5*time.Second))
	if promoted != 1 {
		t.Fatalf("a replica made primary and cut off at once: %d crashes after the grace, want 1", promoted)
	}
}

// testFencer is a fencer of in on the agent's account, with a grace of 3s
// and crash for fencing.
func testFencer(t *testing.T, in *instance, crash func() error) *fencer {
	t.Helper()
	p, err := NewProbes(in.c, 30)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.db.Close() })
	return &fencer{db: p.db, after: 3 * time.Second, peerPort: peerPort, crash: crash, dial: dialOnce, log: slog.New(slog.DiscardHandler)}
}

// admin opens in as the operator's account.
func admin(t *testing.T, in *instance) *dbop.Instance {
	t.Helper()
	db, err := dbop.Open(in.server.Addr(), dbop.Credentials{User: dbop.AdminUser, Password: in.pw.AdminPassword}, dbop.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// listen listens on a loopback port until the test ends.
func listen(t *testing.T) net.Listener {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	return l
}

// closedPort is a loopback port nothing listens on.
func closedPort(t *testing.T) string {
	l := listen(t)
	_, port, _ := net.SplitHostPort(l.Addr().String())
	_ = l.Close()
	return port
}

// waitFor polls cond until it holds, failing the test after 20 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(100 * time.Millisecond) // polling a real server, bounded by the deadline
	}
}
