package soak

import (
	"context"
	"database/sql"
	"net"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/example/mysql-operator/internal/workload"
)

// samplePeriod is how often the sampler asks every server whether it is
// writable.
const samplePeriod = 200 * time.Millisecond

// Violation is a moment at which more than one server was writable, and
// which of them could acknowledge a write.
type Violation struct {
	At       time.Time
	Writable []string
	// Acknowledging are the writable servers a replica's receiver was
	// connected to (Slave_IO_Running Yes, Master_Host the server's
	// address): only their commits could be acknowledged to a client. A
	// primary's own count of semi-sync clients also counts the dead
	// connections of replicas that moved on during a partition.
	Acknowledging []string
}

// sampler asks every reachable server of the MySQL, every samplePeriod,
// whether it is writable (read_only OFF) and which server its replication
// receiver is connected to, and records the moments when more than one was
// writable, and which of those a replica received from. A
// server it cannot reach within the period is not counted: no client can
// reach it either.
type sampler struct {
	stopped chan struct{}
	done    chan struct{}

	mu         sync.Mutex
	violations []Violation
	samples    int
}

// startSampler starts sampling the servers of the soak's MySQL as root.
func startSampler(ctx context.Context, c client.Client, password string) *sampler {
	s := &sampler{stopped: make(chan struct{}), done: make(chan struct{})}
	go s.run(ctx, c, password)
	return s
}

func (s *sampler) run(ctx context.Context, c client.Client, password string) {
	defer close(s.done)
	dbs := map[string]*sql.DB{}
	defer func() {
		for _, db := range dbs {
			_ = db.Close()
		}
	}()
	tick := time.NewTicker(samplePeriod)
	defer tick.Stop()
	for {
		select {
		case <-s.stopped:
			return
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		s.sample(ctx, c, password, dbs)
	}
}

// sample asks every pod's server at once and records a violation.
func (s *sampler) sample(ctx context.Context, c client.Client, password string, dbs map[string]*sql.DB) {
	pods := &corev1.PodList{}
	if err := c.List(ctx, pods, client.InNamespace(namespace)); err != nil {
		return
	}
	at := time.Now()
	var mu sync.Mutex
	var writable []corev1.Pod
	sources := map[string]bool{} // the addresses replicas receive from
	var wg sync.WaitGroup
	for _, p := range pods.Items {
		db := s.open(dbs, p.Status.PodIP, password)
		if db == nil {
			continue
		}
		wg.Go(func() {
			qctx, cancel := context.WithTimeout(ctx, samplePeriod)
			defer cancel()
			w, source, err := observe(qctx, db)
			if err != nil {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if w {
				writable = append(writable, p)
			}
			if source != "" {
				sources[source] = true
			}
		})
	}
	wg.Wait()
	s.record(at, writable, sources)
}

// open returns the pool of ip, opened the first time; nil without an address.
func (s *sampler) open(dbs map[string]*sql.DB, ip, password string) *sql.DB {
	if ip == "" {
		return nil
	}
	if db := dbs[ip]; db != nil {
		return db
	}
	db, err := workload.Open(ip, "root", password)
	if err != nil {
		return nil
	}
	dbs[ip] = db
	return db
}

// observe asks a server whether it is writable, and, as a replica, the
// address its receiver is connected to ("" when not receiving).
func observe(ctx context.Context, db *sql.DB) (writable bool, source string, err error) {
	var readOnly bool
	if err := db.QueryRowContext(ctx, "SELECT @@read_only").Scan(&readOnly); err != nil {
		return false, "", err
	}
	rows, err := db.QueryContext(ctx, "SHOW SLAVE STATUS")
	if err != nil {
		return false, "", err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil || !rows.Next() {
		return !readOnly, "", err
	}
	vals := make([]sql.NullString, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := rows.Scan(ptrs...); err != nil {
		return false, "", err
	}
	row := map[string]string{}
	for i, c := range cols {
		row[c] = vals[i].String
	}
	if row["Slave_IO_Running"] == "Yes" {
		source = row["Master_Host"]
		if net.ParseIP(source) == nil {
			source, _, _ = strings.Cut(source, ".") // <pod>.<headless>.<namespace>.svc
		}
	}
	return !readOnly, source, nil
}

// record keeps a moment with more than one writable server, and which of
// them a replica's receiver was connected to: only those could have a
// commit acknowledged.
func (s *sampler) record(at time.Time, writable []corev1.Pod, sources map[string]bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.samples++
	if len(writable) < 2 {
		return
	}
	v := Violation{At: at}
	for _, p := range writable {
		v.Writable = append(v.Writable, p.Name)
		// Replicas name their source by its pod's DNS name under the
		// headless Service (an address before).
		if sources[p.Status.PodIP] || sources[p.Name] {
			v.Acknowledging = append(v.Acknowledging, p.Name)
		}
	}
	s.violations = append(s.violations, v)
}

// stop stops sampling and returns the violations.
func (s *sampler) stop() []Violation {
	close(s.stopped)
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.violations
}

// String says what a violation saw.
func (v Violation) String() string {
	return v.At.Format(time.RFC3339Nano) + ": writable " + strings.Join(v.Writable, ", ") +
		"; acknowledging " + strings.Join(v.Acknowledging, ", ")
}
