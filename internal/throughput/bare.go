package throughput

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/example/mysql-operator/agent"
	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/certs"
	"github.com/example/mysql-operator/controller/children"
	"github.com/example/mysql-operator/dbop"
	"github.com/example/mysql-operator/internal/testenv"
)

// bare is the server started on loopback as a pod of spec starts it: the
// my.cnf the builder renders for spec, its paths moved under a directory
// of this machine, its data directory made by the agent's init with the
// operator's accounts, its certificate issued by a CA of its own.
type bare struct {
	cmd *exec.Cmd
	target
}

// ioUringSysctl turns io_uring off for the whole machine (2), or on (0).
const ioUringSysctl = "/proc/sys/kernel/io_uring_disabled"

// startBare starts the bare server of spec under dir; with noIOUring, as
// a pod's server runs under the runtime's default seccomp profile, which
// refuses io_uring_setup (InnoDB then uses libaio): io_uring is turned off
// for the machine while the server starts, and back on once it runs.
func startBare(ctx context.Context, spec databasev1.MySQLSpec, dir string, noIOUring bool) (*bare, error) {
	if noIOUring {
		was, err := os.ReadFile(ioUringSysctl)
		if err != nil {
			return nil, fmt.Errorf("turn io_uring off: %w", err)
		}
		if err := os.WriteFile(ioUringSysctl, []byte("2"), 0o644); err != nil {
			return nil, fmt.Errorf("turn io_uring off: %w", err)
		}
		defer func() { _ = os.WriteFile(ioUringSysctl, was, 0o644) }()
	}
	return startBareServer(ctx, spec, dir)
}

// startBareServer starts the bare server of spec under dir.
func startBareServer(ctx context.Context, spec databasev1.MySQLSpec, dir string) (*bare, error) {
	port, err := testenv.FreePort()
	if err != nil {
		return nil, err
	}
	m := &databasev1.MySQL{ObjectMeta: metav1.ObjectMeta{Name: "bench", Namespace: "bench"}, Spec: spec}
	cnf, err := relocate(children.ConfigMap(m).Data["my.cnf"], dir, port)
	if err != nil {
		return nil, err
	}
	for _, d := range []string{"lib", "run", "tmp", "tls", "secrets"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o750); err != nil {
			return nil, err
		}
	}
	if err := writeTLS(filepath.Join(dir, "tls"), m); err != nil {
		return nil, err
	}
	passwords, err := writeSecrets(filepath.Join(dir, "secrets"))
	if err != nil {
		return nil, err
	}
	cfg := agent.Config{DataDir: filepath.Join(dir, "lib", "data"), PodConf: filepath.Join(dir, "run", "pod.cnf"),
		Secrets: filepath.Join(dir, "secrets"), ReportHost: "127.0.0.1"}
	if err := agent.Init(cfg, "bench-0"); err != nil {
		return nil, fmt.Errorf("initialise the bare server: %w", err)
	}
	path := filepath.Join(dir, "my.cnf")
	if err := os.WriteFile(path, []byte(cnf), 0o644); err != nil {
		return nil, err
	}
	b, err := launchBare(ctx, path, filepath.Join(dir, "server.log"), target{host: "127.0.0.1", port: port, password: passwords[agent.RootPasswordFile]})
	if err != nil {
		return nil, err
	}
	if err := promote(ctx, b.target, passwords[agent.AdminPasswordFile]); err != nil {
		b.stop()
		return nil, err
	}
	return b, nil
}

// promote makes the bare server writable as the operator makes a primary
// of one instance (dbop's Promote, no semi-synchronous wait), as its
// account.
func promote(ctx context.Context, t target, adminPassword string) error {
	in, err := dbop.Open(fmt.Sprintf("%s:%d", t.host, t.port), dbop.Credentials{User: dbop.AdminUser, Password: adminPassword}, dbop.Options{})
	if err != nil {
		return err
	}
	defer in.Close()
	if err := in.Promote(ctx, 0); err != nil {
		return fmt.Errorf("make the bare server primary: %w", err)
	}
	return nil
}

// launchBare starts the server with the option file path and waits until
// root logs in over TCP.
func launchBare(ctx context.Context, path, logPath string, t target) (*bare, error) {
	server, err := agent.ServerBinary()
	if err != nil {
		return nil, err
	}
	log, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	args := []string{"--defaults-file=" + path}
	if os.Geteuid() == 0 {
		args = append(args, "--user=root") // a pod's server runs as uid 999
	}
	cmd := exec.Command(server, args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	b := &bare{cmd: cmd, target: t}
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr = "root", t.password, "tcp", fmt.Sprintf("%s:%d", t.host, t.port)
	db, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		return nil, err
	}
	defer db.Close()
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		return db.PingContext(ctx) == nil, nil
	})
	if err != nil {
		b.stop()
		return nil, fmt.Errorf("the bare server did not come up (log %s): %w", logPath, err)
	}
	return b, nil
}

// stop kills the server and waits for it.
func (b *bare) stop() {
	_ = b.cmd.Process.Signal(syscall.SIGTERM)
	_ = b.cmd.Wait()
}

// relocate moves the paths of a pod's my.cnf under dir, and its listener
// to port on loopback; it fails if a path of the pod's is left, so that
// the builder's my.cnf is never half moved.
func relocate(cnf, dir string, port int) (string, error) {
	out := strings.NewReplacer(
		"/var/lib/mysql", filepath.Join(dir, "lib"),
		"/var/run/mysqld", filepath.Join(dir, "run"),
		children.TLSMountPath, filepath.Join(dir, "tls"),
		"tmpdir = /tmp\n", "tmpdir = "+filepath.Join(dir, "tmp")+"\n",
		"port = "+strconv.Itoa(children.MySQLPort)+"\n", "port = "+strconv.Itoa(port)+"\n",
		"bind_address = *\n", "bind_address = 127.0.0.1\n",
	).Replace(cnf)
	for _, left := range []string{"/var/lib/mysql", "/var/run/mysqld", children.TLSMountPath, "= /tmp\n", "bind_address = *"} {
		if strings.Contains(out, left) {
			return "", fmt.Errorf("the builder's my.cnf has %q left after moving its paths:\n%s", left, out)
		}
	}
	return out, nil
}

// writeTLS writes a certificate of a new CA for the server into dir.
func writeTLS(dir string, m *databasev1.MySQL) error {
	ca, err := certs.NewCA("bench CA", time.Now(), 24*time.Hour)
	if err != nil {
		return err
	}
	pair, err := certs.Issue(ca, append(children.TLSNames(m), "127.0.0.1"), time.Now(), 24*time.Hour)
	if err != nil {
		return err
	}
	for name, data := range map[string][]byte{certs.CertKey: pair.Cert, certs.KeyKey: pair.Key, certs.CAKey: ca.Cert} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			return err
		}
	}
	return nil
}

// writeSecrets writes the operator's accounts' password files, as the
// pod's secrets volume holds them, and returns them by file name.
func writeSecrets(dir string) (map[string]string, error) {
	out := map[string]string{}
	for _, name := range []string{agent.RootPasswordFile, agent.AdminPasswordFile, agent.ReplPasswordFile, agent.AgentPasswordFile} {
		raw := make([]byte, 16)
		if _, err := rand.Read(raw); err != nil {
			return nil, err
		}
		out[name] = hex.EncodeToString(raw)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(out[name]), 0o600); err != nil {
			return nil, err
		}
	}
	return out, nil
}
