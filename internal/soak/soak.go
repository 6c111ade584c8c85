// Package soak runs a MySQL of three instances on the local cluster's real
// node through rounds of faults picked at random with a recorded seed (the
// primary's server killed, a replica's killed, the primary's network cut
// and healed, the manager killed in the middle of a switchover, a
// switchover) under a writer, and checks what the data plane promises:
// after each round the MySQL converges, at most one instance is writable
// at any sampled moment, and at the end every acknowledged row is there.
// cmd/soak runs it; it is not part of the tests CI runs.
package soak

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/internal/cluster"
	"github.com/example/mysql-operator/internal/testenv"
	"github.com/example/mysql-operator/internal/workload"
)

// Options bound a soak.
type Options struct {
	// Rounds is how many faults to inject; Duration bounds the whole run.
	Rounds   int
	Duration time.Duration
	// Seed picks the faults; the report records it, so that a run can be
	// repeated.
	Seed uint64
	// Converge bounds how long a round may take to converge.
	Converge time.Duration
	// Log receives a line per step.
	Log io.Writer
}

// namespace and name are the soak's MySQL.
const (
	namespace = "soak"
	name      = "db"
)

// soak is one run: the cluster, the manager, the MySQL's clients.
type soak struct {
	opts    Options
	c       *cluster.Cluster
	manager *cluster.Manager
	rng     *rand.Rand
	primary *sql.DB
	writer  *workload.Writer
	sampler *sampler
	start   time.Time
}

// Run starts a local cluster with the real node, the operator and the
// MySQL, runs the rounds and returns the report; the cluster is stopped
// whatever happens.
func Run(ctx context.Context, opts Options) (*Report, error) {
	root, err := testenv.RepoRoot()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "mysql-operator-soak-")
	if err != nil {
		return nil, err
	}
	c, err := cluster.Start(ctx, cluster.Options{Dir: dir, Progress: opts.Log, RealNode: true})
	if err != nil {
		return nil, err
	}
	defer c.Stop()
	s := &soak{opts: opts, c: c, rng: rand.New(rand.NewPCG(opts.Seed, opts.Seed^0x5eed)), start: time.Now()}
	if err := s.setUp(ctx, root, dir); err != nil {
		return nil, fmt.Errorf("set up (logs in %s): %w", filepath.Join(dir, "logs"), err)
	}
	rep, err := s.rounds(ctx)
	if err != nil {
		return rep, fmt.Errorf("%w (logs in %s)", err, filepath.Join(dir, "logs"))
	}
	return rep, nil
}

// setUp installs and starts the operator, creates the MySQL, and starts
// the writer and the sampler once it is Ready.
func (s *soak) setUp(ctx context.Context, root, dir string) error {
	bin, err := cluster.BuildManager(dir)
	if err != nil {
		return err
	}
	if err := s.c.InstallOperator(ctx, root, "kubectl"); err != nil {
		return err
	}
	if s.manager, err = s.c.StartManager(ctx, "manager", bin, "--leader-elect"); err != nil {
		return err
	}
	if err := s.c.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}); err != nil {
		return err
	}
	m := &databasev1.MySQL{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}, Spec: cluster.RealNodeSpec(3)}
	if err := s.c.Client.Create(ctx, m); err != nil {
		return err
	}
	if _, err := s.converge(ctx); err != nil {
		return err
	}
	password, err := s.rootPassword(ctx)
	if err != nil {
		return err
	}
	svc := &corev1.Service{}
	if err := s.c.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name + "-primary"}, svc); err != nil {
		return err
	}
	if s.primary, err = workload.Open(svc.Spec.ClusterIP, "root", password); err != nil {
		return err
	}
	if err := waitPing(ctx, s.primary); err != nil {
		return err
	}
	if s.writer, err = workload.StartWriter(s.primary); err != nil {
		return err
	}
	s.sampler = startSampler(ctx, s.c.Client, password)
	return nil
}

// rootPassword reads the MySQL's generated root password.
func (s *soak) rootPassword(ctx context.Context) (string, error) {
	secret := &corev1.Secret{}
	if err := s.c.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name + "-root"}, secret); err != nil {
		return "", err
	}
	return string(secret.Data["password"]), nil
}

// waitPing waits until db answers, for a minute at most.
func waitPing(ctx context.Context, db *sql.DB) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for {
		err := db.PingContext(ctx)
		if err == nil || ctx.Err() != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// logf writes a line of progress.
func (s *soak) logf(format string, args ...any) {
	if s.opts.Log != nil {
		fmt.Fprintf(s.opts.Log, "%7.1fs %s\n", time.Since(s.start).Seconds(), fmt.Sprintf(format, args...))
	}
}
