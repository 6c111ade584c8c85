// Command agent is the operator's code in a database pod (package
// agent): `agent install DEST` copies it into a volume shared with
// the database's containers, `agent init` prepares the data directory,
// `agent run-server -- SERVER ARGS` swaps in a prepared seed and runs
// the server (again in place after a crash the agent asked for), `agent
// serve` answers the kubelet's probes and seeds, and
// `agent verify --backup NAME` restores a backup in a scratch pod to prove
// it restorable, and `agent login [--user U] [-- CLIENT ARGS]` becomes the
// command-line client, the password read from its standard input (what
// `kubectl mysql login` runs in a pod).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/example/mysql-operator/agent"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: agent install DEST | init [flags] | run-server [flags] -- SERVER ARGS | serve [flags] | verify --backup NAME [flags] | login [--user U] [-- CLIENT ARGS]")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2:]); err != nil {
		var exit *agent.ExitError
		if errors.As(err, &exit) {
			os.Exit(exit.Code) // the server's status is the container's
		}
		fmt.Fprintf(os.Stderr, "agent %s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
}

func run(cmd string, args []string) error {
	if cmd == "install" {
		if len(args) != 1 {
			return fmt.Errorf("usage: agent install DEST")
		}
		return agent.Install(args[0])
	}
	var c agent.Config
	var o options
	fs := flags(cmd, &c, &o)
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch cmd {
	case "init":
		host, err := os.Hostname()
		if err != nil {
			return err
		}
		return agent.Init(c, host)
	case "verify":
		server, err := agent.ServerBinary()
		if err != nil {
			return err
		}
		msg, err := c.Verify(context.Background(), o.verifyBackup, server)
		if err == nil {
			fmt.Println(msg)
		}
		return agent.WriteResult(o.result, msg, err)
	case "login":
		return agent.Login(c, o.loginUser, fs.Args())
	case "run-server":
		return agent.RunServer(c, fs.Args())
	case "serve":
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		p, err := agent.NewProbes(c, o.maxLag)
		if err != nil {
			return err
		}
		return agent.Serve(ctx, c, p)
	}
	return fmt.Errorf("unknown command %q", cmd)
}

// options are the flags of one subcommand or another beside the agent's Config.
type options struct {
	verifyBackup, result, loginUser string
	maxLag                          int64
}

// flags is the flag set of cmd, filling c and o.
func flags(cmd string, c *agent.Config, o *options) *flag.FlagSet {
	fs := flag.NewFlagSet(cmd, flag.ExitOnError)
	fs.StringVar(&c.DataDir, "data-dir", "/var/lib/mysql/data", "The server's data directory.")
	fs.StringVar(&c.Socket, "socket", "/var/run/mysqld/mysqld.sock", "The server's unix socket.")
	fs.StringVar(&c.PodConf, "pod-conf", "/var/run/mysqld/pod.cnf", "The option file of the pod's own settings.")
	fs.StringVar(&c.Secrets, "secrets", "/etc/mysql-operator/secrets", "The directory of the password files.")
	fs.StringVar(&c.ReportHost, "report-host", "", "The name other instances reach this one by.")
	fs.StringVar(&c.Listen, "listen", ":9080", "The address of the agent's server: the probes, and its API when --tls-dir is empty.")
	fs.StringVar(&c.TLSListen, "tls-listen", ":9443", "The address of the agent's API over mutual TLS, when --tls-dir is set.")
	fs.StringVar(&c.ServerConfig, "server-config", "/etc/mysql-operator/conf/my.cnf", "The server's option file.")
	fs.StringVar(&c.PidFile, "pid-file", "/var/run/mysqld/mysqld.pid", "The server's pid file.")
	fs.StringVar(&c.Engine, "engine", "", "The engine the spec names (MySQL or MariaDB): init refuses an image of another.")
	fs.StringVar(&c.EngineVersion, "engine-version", "", "The major.minor version the spec names: init refuses an image of another.")
	fs.StringVar(&c.BackupDir, "backup-dir", "", "The storage directory of the MySQL's backups; empty when it has none.")
	fs.StringVar(&c.TLSDir, "tls-dir", "", "The directory of the server's certificate, key and CA, reloaded in the server when they change; empty when TLS is disabled.")
	fs.StringVar(&c.RestoreDir, "restore-dir", "", "The storage directory of the backup a new MySQL is made from; empty when none.")
	fs.DurationVar(&c.FenceAfter, "fence-after", 0, "serve: how long a primary with replicas may reach none of them nor the API server before it is fenced (the operator's failover grace); 0 never fences.")
	fs.StringVar(&o.verifyBackup, "backup", "", "verify: the backup to restore and check.")
	fs.StringVar(&o.result, "result", "/dev/termination-log", "verify: where to write the result.")
	fs.Int64Var(&o.maxLag, "max-lag", 30, "The most seconds a replica may lag and be ready.")
	fs.StringVar(&o.loginUser, "user", "root", "login: the account to log in as.")
	return fs
}
