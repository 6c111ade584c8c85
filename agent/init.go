package agent

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/example/mysql-operator/dbop"
)

// Init prepares the pod's server: it writes the pod's own settings and,
// when the data directory is new, initialises it with the server binary of
// the image (mariadb-install-db, or mysqld --initialize-insecure) and the
// operator's bootstrap SQL, rendered by dbop with binary logging off, so
// that no instance starts with a transaction of its own. A data directory
// is made aside and renamed into place at the end: an init that dies
// half-way starts again from nothing.
func Init(c Config, hostname string) error {
	if err := c.WritePodConf(hostname); err != nil {
		return err
	}
	server, err := ServerBinary()
	if err != nil {
		return err
	}
	v, err := serverVersion(server)
	if err != nil {
		return err
	}
	if err := c.checkServer(server, v); err != nil {
		return err
	}
	if restore, err := c.restoreWanted(hostname); err != nil || restore {
		if err != nil {
			return err
		}
		return c.restore(context.Background(), server, v)
	}
	if _, err := os.Stat(filepath.Join(c.DataDir, "mysql")); err == nil {
		return nil // initialised already
	}
	d, err := dbop.DialectFor(v)
	if err != nil {
		return err
	}
	sqlFile, err := c.writeBootstrap(d)
	if err != nil {
		return err
	}
	defer os.Remove(sqlFile)
	tmp := c.DataDir + ".init"
	if err := os.RemoveAll(tmp); err != nil {
		return err
	}
	if err := os.MkdirAll(tmp, 0o750); err != nil {
		return err
	}
	cmd, err := initCommand(v, server, tmp, sqlFile)
	if err != nil {
		return err
	}
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("initialise the data directory: %w", err)
	}
	return os.Rename(tmp, c.DataDir)
}

// ServerBinary is the image's database server.
func ServerBinary() (string, error) {
	server, err := lookPath("mariadbd", "mysqld")
	if err != nil {
		return "", fmt.Errorf("the image has no database server: %w", err)
	}
	return server, nil
}

// checkServer says what the image holds when its server is not the engine
// and version the spec names: the pod would not start, or would start a
// server the operator speaks another dialect to.
func (c Config) checkServer(server string, v dbop.Version) error {
	if c.Engine == "" {
		return nil
	}
	if v.Engine.String() == c.Engine && fmt.Sprintf("%d.%d", v.Major, v.Minor) == c.EngineVersion {
		return nil
	}
	return fmt.Errorf("the image's server is %s (%s), but spec.engine is %s and spec.version %s: set spec.image to an image of %s %s, or spec.engine and spec.version to what the image runs",
		v, server, c.Engine, c.EngineVersion, c.Engine, c.EngineVersion)
}

// writeBootstrap renders the bootstrap SQL into a private file and returns
// its path. It holds passwords: it lives in /tmp, an emptyDir, only until
// the data directory is made.
func (c Config) writeBootstrap(d dbop.Dialect) (string, error) {
	cfg, err := c.bootstrapConfig()
	if err != nil {
		return "", err
	}
	sql, err := d.Bootstrap(cfg)
	if err != nil {
		return "", err
	}
	return privateFile("bootstrap-*.sql", sql)
}

// initCommand returns the command that initialises dir with the server of
// version v, running sqlFile once.
func initCommand(v dbop.Version, server, dir, sqlFile string) (*exec.Cmd, error) {
	if v.Engine == dbop.EngineMariaDB {
		installDB, err := lookPath("mariadb-install-db", "mysql_install_db")
		if err != nil {
			return nil, err
		}
		return exec.Command(installDB, "--no-defaults", "--datadir="+dir, "--auth-root-authentication-method=normal",
			"--skip-test-db", "--skip-name-resolve", "--extra-file="+sqlFile), nil
	}
	return exec.Command(server, "--no-defaults", "--initialize-insecure", "--datadir="+dir, "--init-file="+sqlFile), nil
}
