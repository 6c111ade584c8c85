package soak

import (
	"context"
	"database/sql"
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
	// Acknowledging are the writable servers with a semi-sync replica
	// connected, whose commits could be acknowledged to a client.
	Acknowledging []string
}

// sampler asks every reachable server of the MySQL, every samplePeriod,
// whether it is writable (read_only OFF) and has a semi-sync replica
// connected, and records the moments when more than one was writable. A
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
	var writable, acknowledging []string
	var wg sync.WaitGroup
	for _, p := range pods.Items {
		ip := p.Status.PodIP
		if ip == "" {
			continue
		}
		db := dbs[ip]
		if db == nil {
			var err error
			if db, err = workload.Open(ip, "root", password); err != nil {
				continue
			}
			dbs[ip] = db
		}
		wg.Go(func() {
			qctx, cancel := context.WithTimeout(ctx, samplePeriod)
			defer cancel()
			var readOnly bool
			var clients int
			err := db.QueryRowContext(qctx, "SELECT @@read_only, IFNULL((SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS "+
				"WHERE VARIABLE_NAME = 'RPL_SEMI_SYNC_MASTER_CLIENTS'), 0)").Scan(&readOnly, &clients)
			if err != nil || readOnly {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			writable = append(writable, p.Name)
			if clients > 0 {
				acknowledging = append(acknowledging, p.Name)
			}
		})
	}
	wg.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.samples++
	if len(writable) > 1 {
		s.violations = append(s.violations, Violation{At: at, Writable: writable, Acknowledging: acknowledging})
	}
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
