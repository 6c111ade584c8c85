package dataplane

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/example/mysql-operator/agent"
	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/controller/children"
	"github.com/example/mysql-operator/dbop"
	"github.com/example/mysql-operator/topology"
)

// agentOf is the client of the agent of instance i, over mutual TLS
// while its pod serves TLS.
func agentOf(m *databasev1.MySQL, in *instances, i int, passwords map[string][]byte) (*agent.Client, error) {
	if in.pods[i] == nil {
		return nil, fmt.Errorf("instance %d has no pod", i)
	}
	addr, cfg, err := children.AgentEndpoint(m, in.pods[i], in.tlsSecret)
	if err != nil {
		return nil, err
	}
	return agent.NewClient(addr, string(passwords[children.AgentPasswordKey]), cfg), nil
}

// readRestore reads, from instance 0's agent, what the restore that made
// its data reached: once, for a MySQL made from a backup whose status has
// no restore yet, once instance 0 answers. Nil otherwise, or when the
// agent cannot say (the next check asks again).
func readRestore(ctx context.Context, m *databasev1.MySQL, in *instances, passwords map[string][]byte) *databasev1.RestoreStatus {
	if m.Spec.Restore == nil || m.Status.Restore != nil || len(in.observed) == 0 || !in.observed[0].Reachable {
		return nil
	}
	client, err := agentOf(m, in, 0, passwords)
	if err != nil {
		return nil
	}
	res, found, err := client.Restored(ctx)
	if err != nil || !found {
		return nil
	}
	return &databasev1.RestoreStatus{Backup: res.Backup, GTID: res.GTID, ReplayedBinlogs: int32(res.Replayed),
		CompletionTime: metav1.NewTime(res.Completed)}
}

// seedRequest asks for a seed from the agent of instance from: over
// mutual TLS, verified for its pod's name, while its pod serves TLS.
func seedRequest(m *databasev1.MySQL, in *instances, from int) (agent.SeedRequest, error) {
	if in.pods[from] == nil {
		return agent.SeedRequest{}, fmt.Errorf("the donor, instance %d, has no pod", from)
	}
	donor, cfg, err := children.AgentEndpoint(m, in.pods[from], in.tlsSecret)
	if err != nil {
		return agent.SeedRequest{}, err
	}
	req := agent.SeedRequest{Donor: donor, DonorBinlogState: in.status[from].GTIDBinlogState}
	if cfg != nil {
		req.DonorName = cfg.ServerName
	}
	return req, nil
}

// seed copies the donor's data into an empty instance: MySQL clones over
// SQL (the recipient restarts itself with the donor's data and GTIDs);
// MariaDB streams a mariadb-backup from the donor's agent into the
// recipient's (seedMariaDB).
func (d *DataPlane) seed(ctx context.Context, m *databasev1.MySQL, in *instances, a topology.Action, passwords map[string][]byte) (string, error) {
	if m.Spec.Engine == databasev1.EngineMariaDB {
		return d.seedMariaDB(ctx, m, in, a, passwords)
	}
	donor := dbop.Source{Host: in.observed[a.From].Host, Port: children.MySQLPort, User: dbop.AdminUser, Password: string(passwords[children.AdminPasswordKey])}
	if err := need(in, a.Target).CloneFrom(ctx, donor); err != nil {
		return "", fmt.Errorf("clone %s from %s: %w", children.PodName(m, a.Target), children.PodName(m, a.From), err)
	}
	return fmt.Sprintf("cloned %s from %s", children.PodName(m, a.Target), children.PodName(m, a.From)), nil
}

// seedMariaDB moves the seed of an empty MariaDB instance one step, by
// the state its agent reports: start it (the donor's agent streams a
// mariadb-backup), wait while it runs, restart the server once the copy is
// prepared (its container swaps the copy in), then record the backup's
// GTID position and clear the seed; the next check configures the
// instance as a replica. It says what it did, for an event, "" for nothing.
func (d *DataPlane) seedMariaDB(ctx context.Context, m *databasev1.MySQL, in *instances, a topology.Action, passwords map[string][]byte) (string, error) {
	target, err := agentOf(m, in, a.Target, passwords)
	if err != nil {
		return "", err
	}
	st, err := target.SeedStatus(ctx)
	if err != nil {
		return "", err
	}
	db := need(in, a.Target)
	switch st.Phase {
	case agent.SeedNone:
		req, err := seedRequest(m, in, a.From)
		if err != nil {
			return "", err
		}
		if err := target.StartSeed(ctx, req); err != nil {
			return "", err
		}
		return fmt.Sprintf("seeding %s from a backup of %s", children.PodName(m, a.Target), children.PodName(m, a.From)), nil
	case agent.SeedRunning:
		return "", nil
	case agent.SeedPrepared:
		return fmt.Sprintf("restarting %s on the copy of %s", children.PodName(m, a.Target), children.PodName(m, a.From)), db.Shutdown(ctx)
	case agent.SeedRestored:
		for _, step := range []func(context.Context) error{db.ResetReplica,
			func(ctx context.Context) error { return db.SetGTIDBinlogState(ctx, st.BinlogState) },
			func(ctx context.Context) error { return db.SetGTIDSlavePos(ctx, st.SlavePos) }, target.ClearSeed} {
			if err := step(ctx); err != nil {
				return "", err
			}
		}
		return fmt.Sprintf("%s restored at GTID position %s", children.PodName(m, a.Target), st.SlavePos), nil
	}
	if err := target.ClearSeed(ctx); err != nil {
		return "", err
	}
	return "", fmt.Errorf("seeding %s failed: %s", children.PodName(m, a.Target), st.Error)
}
