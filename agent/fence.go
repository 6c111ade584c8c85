package agent

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/example/mysql-operator/dbop"
)

// Self-fencing: a primary cut off from the network (its node lost, or
// partitioned) cannot be made read-only by the operator, which fails over
// without it; healed, it would be a second writable server until the
// operator reaches it. Its agent, which shares its network, fences it
// first: when the server is a writable primary with replicas and, for
// FenceAfter (the operator's failover grace), neither any of the replicas
// connected to it nor the Kubernetes API server answered a connection, the
// agent crashes the server (Crash). Its supervisor (RunServer) starts it
// again at once, read-only (the operator's my.cnf), its crash recovery
// rolling back the transactions no replica acknowledged (RecoveryArgs),
// and the operator decides: it rejoins as a replica after a failover, or
// is made writable again when none happened. Only a primary that reached nothing fences itself: one
// whose replicas are all restarting still reaches the API server, an API
// server that is down leaves the replicas reachable, and an agent that
// never reached any of them (a NetworkPolicy forbidding it) never fences.

// fenceInterval is how often the agent checks: one status query on the
// pod's socket (every instance, to know whether it is a primary), and on
// a primary with replicas one process list read and one TCP connection to
// each replica and to the API server. A primary is fenced between the
// grace and the grace plus two intervals after its last contact.
const fenceInterval = time.Second

// fenceDialTimeout bounds each connection attempt to a contact.
const fenceDialTimeout = time.Second

// peerPort is the MySQL port of every instance, the replicas' included.
const peerPort = "3306"

// replicationSenders are the process list commands of the threads that
// stream the binary log to a replica.
var replicationSenders = []string{"Binlog Dump", "Binlog Dump GTID"}

// fencer fences the pod's server when it is a primary cut off from
// everything.
type fencer struct {
	db    *dbop.Instance
	after time.Duration
	// apiServer is the API server's address (KUBERNETES_SERVICE_HOST and
	// _PORT, which the kubelet gives every container), "" if unknown.
	apiServer string
	// peerPort is the port the replicas' servers listen on.
	peerPort string
	crash    func() error
	dial     func(ctx context.Context, addr string) error
	log      *slog.Logger
	// everReached says a contact once answered since the agent started
	// (the API server, dialed from the start, or a replica): until one
	// has, the agent cannot tell a cut from a network that forbids these
	// connections (a NetworkPolicy), and never fences.
	everReached bool
	// lastContact is when the primary last reached a contact, or when it
	// became a primary with replicas.
	lastContact time.Time
}

// newFencer fences c's server after a cut of c.FenceAfter.
func newFencer(c Config, db *dbop.Instance, log *slog.Logger) *fencer {
	f := &fencer{db: db, after: c.FenceAfter, peerPort: peerPort, crash: c.Crash, log: log, dial: dialOnce}
	if h, p := os.Getenv("KUBERNETES_SERVICE_HOST"), os.Getenv("KUBERNETES_SERVICE_PORT"); h != "" && p != "" {
		f.apiServer = net.JoinHostPort(h, p)
	}
	return f
}

// dialOnce opens and closes a TCP connection to addr.
func dialOnce(ctx context.Context, addr string) error {
	ctx, cancel := context.WithTimeout(ctx, fenceDialTimeout)
	defer cancel()
	conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	return conn.Close()
}

// run checks every fenceInterval until ctx ends.
func (f *fencer) run(ctx context.Context) {
	t := time.NewTicker(fenceInterval)
	defer t.Stop()
	f.lastContact = time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		f.check(ctx, time.Now())
	}
}

// check looks at the server and its contacts once, and fences it when due.
func (f *fencer) check(ctx context.Context, now time.Time) {
	ctx, cancel := context.WithTimeout(ctx, fenceInterval+fenceDialTimeout)
	defer cancel()
	st, err := f.db.Status(ctx)
	primary := err == nil && fenceable(st)
	if !primary && !f.everReached {
		f.learnContact(ctx)
	}
	reached := !primary || f.reachedAny(ctx)
	var fence bool
	f.lastContact, fence = fenceDue(primary, reached, f.everReached, f.lastContact, now, f.after)
	if !fence {
		return
	}
	f.log.Warn("fencing the server: a primary that reached none of its replicas nor the API server",
		"for", now.Sub(f.lastContact).Round(time.Millisecond).String(), "apiServer", f.apiServer)
	if err := f.crash(); err != nil {
		f.log.Error("fencing the server failed", "error", err)
		return
	}
	f.lastContact = now
}

// fenceable says st is a writable primary with replicas: semi-sync on as
// a source, which the operator turns on only when the MySQL has replicas.
func fenceable(st *dbop.Status) bool {
	return !st.ReadOnly && !st.SuperReadOnly && st.Replica == nil && st.SemiSync.SourceEnabled
}

// fenceDue is the fencing decision: the new time of last contact, and
// whether to fence now. Anything but a primary, a primary that reached a
// contact, or one that never reached any (it cannot judge), is in contact
// now; a primary fences once it has been out of contact for after (0:
// never).
func fenceDue(primary, reached, everReached bool, lastContact, now time.Time, after time.Duration) (time.Time, bool) {
	if !primary || reached || !everReached || after <= 0 {
		return now, false
	}
	return lastContact, now.Sub(lastContact) >= after
}

// learnContact dials the API server, until it has answered once, while
// the server is not a fenceable primary: a replica made primary and cut
// off at once (a switchover, then the cut) has reached no replica as a
// primary, and must still be known to be in a network that allows its
// contacts. It costs one connection in the agent's first second, or one
// a second while the API server cannot be reached.
func (f *fencer) learnContact(ctx context.Context) {
	if f.apiServer != "" && f.dial(ctx, f.apiServer) == nil {
		f.everReached = true
	}
}

// reachedAny says whether one of the primary's contacts answered: the
// replicas its binary log streams to, and the API server. With no contact
// known at all it cannot judge, and says yes.
func (f *fencer) reachedAny(ctx context.Context) bool {
	addrs, err := f.contacts(ctx)
	if err != nil {
		f.log.Error("listing the replicas to check contact with", "error", err)
		return true
	}
	if len(addrs) == 0 {
		return true
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	reached := make(chan bool, len(addrs))
	var wg sync.WaitGroup
	for _, a := range addrs {
		wg.Go(func() { reached <- f.dial(ctx, a) == nil })
	}
	go func() { wg.Wait(); close(reached) }()
	for ok := range reached {
		if ok {
			f.everReached = true
			return true
		}
	}
	return false
}

// contacts are the MySQL addresses of the replicas connected to the server
// (their senders' client hosts, by address: the servers skip name
// resolution), and the API server's.
func (f *fencer) contacts(ctx context.Context) ([]string, error) {
	conns, err := f.db.Connections(ctx)
	if err != nil {
		return nil, fmt.Errorf("list the server's connections: %w", err)
	}
	var addrs []string
	for _, c := range conns {
		if !slices.Contains(replicationSenders, c.Command) {
			continue
		}
		host, _, err := net.SplitHostPort(c.Host)
		if err != nil {
			host = c.Host
		}
		if a := net.JoinHostPort(host, f.peerPort); !slices.Contains(addrs, a) {
			addrs = append(addrs, a)
		}
	}
	if f.apiServer != "" {
		addrs = append(addrs, f.apiServer)
	}
	return addrs, nil
}
