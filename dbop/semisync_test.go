package dbop

import (
	"fmt"
	"testing"
	"time"
)

// commitWaitsForTheDialectsAcks is the subtest "a commit waits for the
// dialect's acknowledgements": the primary is configured to wait for both
// replicas, as a MySQL primary of a larger cluster would be, and a commit
// completes exactly when as many receivers as MariaDB.SemiSyncAcks says
// run, which is what topology's failover quorum counts on: one, whatever
// the wait count.
func (r *replCase) commitWaitsForTheDialectsAcks(t *testing.T) {
	e, ctx := r.e, r.ctx
	const waitCount = 2
	acks := MariaDB.SemiSyncAcks(waitCount)
	if _, err := e.root(0).ExecContext(ctx, "CREATE TABLE app.acks (id INT PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	if err := e.ins[0].Promote(ctx, waitCount); err != nil {
		t.Fatal(err)
	}
	restart := func() {
		for _, i := range []int{1, 2} {
			if err := e.ins[i].StartReplica(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	for running := 2; running >= 0; running-- {
		for i := 1 + running; i <= 2; i++ {
			if err := e.ins[i].StopIOThread(ctx); err != nil {
				t.Fatal(err)
			}
		}
		done := make(chan error, 1)
		go func() {
			_, err := e.root(0).ExecContext(ctx, "INSERT INTO app.acks VALUES (?)", running)
			done <- err
		}()
		if running >= acks {
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("%d receivers running: %v", running, err)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("%d receivers running, %d acknowledgements expected: the commit still waits", running, acks)
			}
			continue
		}
		// Asserting that something does not happen needs a window.
		select {
		case err := <-done:
			t.Fatalf("%d receivers running, fewer than %d: the commit returned (%v)", running, acks, err)
		case <-time.After(time.Second):
		}
		if st, err := e.ins[0].Status(ctx); err != nil || st.SemiSync.WaitSessions != 1 {
			t.Errorf("a commit waits: status %+v, %v; want one session waiting", st.SemiSync, err)
		}
		restart()
		if err := <-done; err != nil {
			t.Fatal(fmt.Errorf("the commit released by the receivers: %w", err))
		}
	}
	if err := e.ins[0].Promote(ctx, 1); err != nil {
		t.Fatal(err)
	}
}
