package dbop

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/example/mysql-operator/internal/dbtest"
	"github.com/example/mysql-operator/topology"
	"github.com/go-sql-driver/mysql"
)

// testPasswords need quoting in the bootstrap file.
var testPasswords = BootstrapConfig{RootPassword: `root'pw\1`, AdminPassword: "admin-pw;\n2",
	ReplPassword: "repl`pw3", AgentPassword: "agent%pw_4"}

var adminCred = Credentials{User: AdminUser, Password: testPasswords.AdminPassword}

// env is a set of real MariaDB servers with the operator's accounts, and the
// Instances that reach them as the admin.
type env struct {
	t       *testing.T
	servers []*dbtest.Server
	ins     []*Instance
	pool    *Pool
}

// startEnv starts n MariaDB servers bootstrapped with testPasswords.
func startEnv(t *testing.T, n int) *env {
	t.Helper()
	boot, err := MariaDB.Bootstrap(testPasswords)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, pool: NewPool(Options{})}
	t.Cleanup(func() { _ = e.pool.Close() })
	for _, s := range dbtest.Start(t, n, dbtest.Config{Bootstrap: boot}) {
		e.add(s)
	}
	return e
}

// add appends a server and its Instance.
func (e *env) add(s *dbtest.Server) {
	e.t.Helper()
	in, err := e.pool.Get(s.Addr(), adminCred)
	if err != nil {
		e.t.Fatal(err)
	}
	e.servers, e.ins = append(e.servers, s), append(e.ins, in)
}

// source is the replication source for instance i.
func (e *env) source(i int) Source {
	return Source{Host: "127.0.0.1", Port: e.servers[i].Port, User: ReplUser, Password: testPasswords.ReplPassword}
}

// rawDB opens a plain connection pool for assertions (not through dbop).
func rawDB(t *testing.T, addr, user, password string) *sql.DB {
	t.Helper()
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr = user, password, "tcp", addr
	cfg.Timeout, cfg.ReadTimeout, cfg.InterpolateParams = 5*time.Second, 30*time.Second, true
	if addr != "" && addr[0] == '/' {
		cfg.Net = "unix"
	}
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(conn)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// root returns a plain connection to server i as root@'%'.
func (e *env) root(i int) *sql.DB {
	return rawDB(e.t, e.servers[i].Addr(), "root", testPasswords.RootPassword)
}

// eventually polls f every 50ms until it succeeds or timeout passes.
func eventually(t *testing.T, timeout time.Duration, what string, f func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not true after %s: %v", what, timeout, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// mysqlErrno returns the server error number of err, 0 if none.
func mysqlErrno(err error) uint16 {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number
	}
	return 0
}

// observe builds the input of topology.Decide from the real servers.
func (e *env) observe(ctx context.Context, c topology.Cluster) topology.Cluster {
	e.t.Helper()
	c.Flavor, c.Replicas, c.Instances = topology.FlavorMariaDB, len(e.ins), nil
	c.SemiSyncAcks = MariaDB.SemiSyncAcks(topology.SemiSyncWaitCount(c.Replicas))
	for i, in := range e.ins {
		st, err := in.Status(ctx)
		if err != nil {
			c.Instances = append(c.Instances, topology.Instance{Index: i, Host: "127.0.0.1",
				Port: e.servers[i].Port, PodExists: true})
			continue
		}
		ti, err := st.Instance(i, "127.0.0.1", e.servers[i].Port)
		if err != nil {
			e.t.Fatal(err)
		}
		ti.PodExists, ti.PodReady = true, true
		c.Instances = append(c.Instances, ti)
	}
	return c
}

// decide observes and decides.
func (e *env) decide(ctx context.Context, c topology.Cluster) (topology.Cluster, topology.Plan) {
	e.t.Helper()
	c = e.observe(ctx, c)
	p, err := topology.Decide(c)
	if err != nil {
		e.t.Fatal(err)
	}
	return c, p
}

// act performs the simple actions of a plan the way the reconciler will.
func (e *env) act(ctx context.Context, c topology.Cluster, p topology.Plan) {
	e.t.Helper()
	a := p.Action
	var err error
	switch a.Kind {
	case topology.ActionBootstrap, topology.ActionConfigurePrimary:
		err = e.ins[a.Target].Promote(ctx, p.SemiSyncWaitCount)
	case topology.ActionSetReadOnly:
		for _, i := range a.Instances {
			if err = e.ins[i].SetReadOnly(ctx); err != nil {
				break
			}
		}
	case topology.ActionConfigureReplicas:
		for _, i := range a.Instances {
			if err = e.ins[i].ConfigureReplica(ctx, e.source(a.Target), c.Replicas > 1); err != nil {
				break
			}
		}
	default:
		e.t.Fatalf("act: unexpected action %+v", a)
	}
	if err != nil {
		e.t.Fatalf("act %s: %v", a.Kind, err)
	}
}

// converge observes, decides and acts until every instance is ready and nothing
// is left to do; it returns the final plan.
func (e *env) converge(ctx context.Context, c topology.Cluster) topology.Plan {
	e.t.Helper()
	var p topology.Plan
	eventually(e.t, 30*time.Second, "cluster converges", func() error {
		c, p = e.decide(ctx, c)
		if p.Action.Kind != topology.ActionNone {
			e.act(ctx, c, p)
			c.CurrentPrimary = p.Primary
			return fmt.Errorf("acted: %s", p.Action.Reason)
		}
		for _, st := range p.Instances {
			if !st.Ready {
				return fmt.Errorf("instance %d (%s) not ready: %s", st.Index, st.Role, st.Reason)
			}
		}
		return nil
	})
	return p
}

// countRows returns SELECT COUNT(*) FROM app.t on db.
func countRows(db *sql.DB) (int, error) {
	var n int
	err := db.QueryRow("SELECT COUNT(*) FROM app.t").Scan(&n)
	return n, err
}

// waitRows waits until every server in ids has n rows in app.t.
func (e *env) waitRows(n int, ids ...int) {
	e.t.Helper()
	for _, i := range ids {
		db := e.root(i)
		eventually(e.t, 20*time.Second, "rows on instance "+strconv.Itoa(i), func() error {
			got, err := countRows(db)
			if err == nil && got != n {
				err = fmt.Errorf("%d rows, want %d", got, n)
			}
			return err
		})
	}
}
