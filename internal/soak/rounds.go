package soak

import (
	"context"
	"errors"
	"fmt"
	"time"

	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/internal/testenv"
)

// Round is what one fault did.
type Round struct {
	// Fault is its kind; Target the pod it hit, "" for none.
	Fault, Target string
	// Gap is the longest time between two acknowledged writes from the
	// fault to the convergence; Converged how long the MySQL took to be
	// Ready with every instance ready again.
	Gap, Converged time.Duration
	// Primary is the primary afterwards.
	Primary string
}

// rounds injects the faults, one per round, until Rounds or Duration,
// and checks the rows at the end.
func (s *soak) rounds(ctx context.Context) (*Report, error) {
	rep := &Report{Seed: s.opts.Seed}
	deadline := s.start.Add(s.opts.Duration)
	for i := range s.opts.Rounds {
		if time.Now().After(deadline) {
			s.logf("the time is up after %d rounds", i)
			break
		}
		f := faults[s.rng.IntN(len(faults))]
		r, err := s.round(ctx, f)
		rep.Rounds = append(rep.Rounds, r)
		s.logf("round %d: %s %s, longest write gap %s, converged in %s, primary %s", i+1, r.Fault, r.Target,
			r.Gap.Round(time.Millisecond), r.Converged.Round(time.Millisecond), r.Primary)
		if err != nil {
			return rep, s.finish(rep, fmt.Errorf("round %d (%s %s): %w", i+1, r.Fault, r.Target, err))
		}
	}
	return rep, s.finish(rep, nil)
}

// round injects f and waits until the MySQL converges.
func (s *soak) round(ctx context.Context, f fault) (Round, error) {
	m := &databasev1.MySQL{}
	if err := s.c.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, m); err != nil {
		return Round{Fault: f.name}, err
	}
	began := time.Now()
	target, err := f.inject(ctx, s, m)
	r := Round{Fault: f.name, Target: target}
	if err != nil {
		return r, fmt.Errorf("inject: %w", err)
	}
	primary, err := s.converge(ctx)
	r.Converged, r.Primary = time.Since(began), primary
	r.Gap, _, _ = s.writer.Outage(began, time.Now())
	if r.Gap > longGap {
		s.logAttempts(began, time.Now())
	}
	return r, err
}

// converge waits until the MySQL is Ready with every instance ready, and
// returns its primary.
func (s *soak) converge(ctx context.Context) (string, error) {
	key := client.ObjectKey{Namespace: namespace, Name: name}
	ctx, cancel := context.WithTimeout(ctx, s.opts.Converge)
	defer cancel()
	var last string
	for {
		m := &databasev1.MySQL{}
		res, err := testenv.Kstatus(ctx, s.c.Client, key)
		if err == nil && res.Status == status.CurrentStatus {
			if err = s.c.Client.Get(ctx, key, m); err == nil && allReady(m) {
				return m.Status.CurrentPrimary, nil
			}
		}
		if res != nil {
			last = res.Message
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("not converged in %s: %s", s.opts.Converge, last)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// longGap is a write gap whose attempts the log shows.
const longGap = 10 * time.Second

// logAttempts logs the writer's refused attempts between from and to, and
// the first acknowledged one after each run of them: where a long gap went.
func (s *soak) logAttempts(from, to time.Time) {
	refused := false
	for _, a := range s.writer.Attempts(from, to) {
		if a.Err == nil && !refused {
			continue
		}
		s.logf("  attempt %+.2fs..%+.2fs: %v", a.Start.Sub(from).Seconds(), a.End.Sub(from).Seconds(), a.Err)
		refused = a.Err != nil
	}
}

// allReady says whether status shows one primary and every instance ready.
func allReady(m *databasev1.MySQL) bool {
	primaries := 0
	for _, in := range m.Status.Instances {
		if !in.Ready {
			return false
		}
		if in.Role == databasev1.RolePrimary {
			primaries++
		}
	}
	return primaries == 1 && len(m.Status.Instances) == int(m.Spec.Replicas)
}

// finish stops the writer and the sampler, counts the acknowledged rows
// lost and the moments with two writable instances, and joins err.
func (s *soak) finish(rep *Report, err error) error {
	s.writer.Stop()
	rep.Violations = s.sampler.stop()
	lost, acked, lostErr := s.writer.Lost(s.primary)
	rep.Acked, rep.Lost = acked, lost
	rep.Elapsed = time.Since(s.start)
	if lostErr != nil {
		err = errors.Join(err, fmt.Errorf("read the rows back: %w", lostErr))
	}
	if len(lost) > 0 {
		err = errors.Join(err, fmt.Errorf("%d of %d acknowledged rows lost", len(lost), acked))
	}
	if n := rep.TwoAcknowledging(); n > 0 {
		err = errors.Join(err, fmt.Errorf("%d moments with two instances that could acknowledge a write", n))
	}
	return err
}
