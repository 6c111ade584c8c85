package controller

import (
	"context"
	"fmt"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/dbop"
	"github.com/example/mysql-operator/topology"
)

// seed copies the donor's data into an empty instance: MySQL clones over
// SQL (the recipient restarts itself with the donor's data and GTIDs);
// MariaDB streams a mariadb-backup from the donor's agent into the
// recipient's (seedMariaDB).
func (r *Reconciler) seed(ctx context.Context, m *databasev1.MySQL, in *instances, a topology.Action, passwords map[string][]byte) error {
	if m.Spec.Engine == databasev1.EngineMariaDB {
		return r.seedMariaDB(ctx, m, in, a, passwords)
	}
	donor := dbop.Source{Host: in.observed[a.From].Host, Port: mysqlPort, User: dbop.AdminUser, Password: string(passwords[adminPasswordKey])}
	if err := need(in, a.Target).CloneFrom(ctx, donor); err != nil {
		return fmt.Errorf("clone %s from %s: %w", podName(m, a.Target), podName(m, a.From), err)
	}
	return nil
}

// seedMariaDB is not built yet: a MariaDB instance that must be seeded
// stays Empty, out of the Services, and the MySQL says why.
func (r *Reconciler) seedMariaDB(context.Context, *databasev1.MySQL, *instances, topology.Action, map[string][]byte) error {
	return fmt.Errorf("seeding a MariaDB instance from mariadb-backup is not implemented yet")
}
