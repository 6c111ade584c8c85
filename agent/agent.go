// Package agent is the operator's code that runs inside a database pod:
// it installs itself into the pod, initialises a new data directory with
// the operator's accounts, and answers the kubelet's probes. Its SQL goes
// through package dbop, like the operator's.
package agent

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/example/mysql-operator/dbop"
)

// Config is where the agent finds things in the pod, set by flags the
// operator's pod template passes.
type Config struct {
	// DataDir is the server's data directory, a subdirectory of the data
	// volume so that a fresh filesystem's lost+found does not matter.
	DataDir string
	// Socket is the server's unix socket.
	Socket string
	// PodConf is the option file of the pod's own settings (server_id,
	// report_host) that the operator's my.cnf includes.
	PodConf string
	// Secrets is the directory of the password files: root, admin,
	// replication, agent.
	Secrets string
	// ReportHost is the name other instances reach this one by.
	ReportHost string
	// Listen is the address of the agent's server: the probes, and the
	// API too when TLSDir is empty.
	Listen string
	// TLSListen is the address of the API over mutual TLS, when TLSDir is set.
	TLSListen string
	// ServerConfig is the server's option file (the operator's my.cnf),
	// which mariadb-backup reads too.
	ServerConfig string
	// PidFile is the server's pid file, on the volume the pod's
	// containers share.
	PidFile string
	// Engine and EngineVersion are what the MySQL's spec names (MySQL or
	// MariaDB, and major.minor): init checks that the image's server is
	// that. Empty skips the check.
	Engine, EngineVersion string
	// BackupDir is the storage directory of the MySQL's backups
	// (backup.ConfigFile and the credentials); empty when it has none.
	BackupDir string
	// RestoreDir is the storage directory of the backup a new MySQL is
	// made from (backup.RestoreFile and the credentials); empty when none.
	RestoreDir string
	// TLSDir holds the server's certificate, key and CA (tls.crt, tls.key,
	// ca.crt); the agent reloads them in the server when they change.
	// Empty when TLS is disabled.
	TLSDir string
	// FenceAfter is how long a primary with replicas may reach none of
	// them nor the API server before its agent fences it (fence.go): the
	// operator's failover grace. 0 never fences.
	FenceAfter time.Duration
}

// Password files in Config.Secrets.
const (
	// RootPasswordFile holds the root password.
	RootPasswordFile = "root"
	// AdminPasswordFile holds the password of dbop.AdminUser.
	AdminPasswordFile = "admin"
	// ReplPasswordFile holds the password of dbop.ReplUser.
	ReplPasswordFile = "replication"
	// AgentPasswordFile holds the password of dbop.AgentUser.
	AgentPasswordFile = "agent"
)

// Install copies the running binary to dest, so that a container of
// another image (the database's) can run it.
func Install(dest string) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	src, err := os.Open(self)
	if err != nil {
		return err
	}
	defer src.Close()
	if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
		return err
	}
	tmp := dest + ".tmp"
	out, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, src); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, dest)
}

// ordinalRE takes the ordinal off a StatefulSet pod's name.
var ordinalRE = regexp.MustCompile(`-([0-9]+)$`)

// WritePodConf writes the pod's own server settings: server_id is the pod's
// ordinal plus one (0 is not a valid replication server_id), report_host
// its stable name.
func (c Config) WritePodConf(hostname string) error {
	ordinal, err := ordinalOf(hostname)
	if err != nil {
		return err
	}
	conf := fmt.Sprintf("[mysqld]\nserver_id = %d\n", ordinal+1)
	if c.ReportHost != "" {
		conf += "report_host = " + c.ReportHost + "\n"
	}
	return os.WriteFile(c.PodConf, []byte(conf), 0o644)
}

// ordinalOf is the ordinal of a StatefulSet pod's name.
func ordinalOf(hostname string) (int, error) {
	m := ordinalRE.FindStringSubmatch(hostname)
	if m == nil {
		return 0, fmt.Errorf("pod name %q does not end in an ordinal", hostname)
	}
	ordinal, err := strconv.Atoi(m[1])
	if err != nil {
		return 0, fmt.Errorf("pod name %q: %w", hostname, err)
	}
	return ordinal, nil
}

// readSecret reads one password file.
func (c Config) readSecret(name string) (string, error) {
	data, err := os.ReadFile(filepath.Join(c.Secrets, name))
	if err != nil {
		return "", fmt.Errorf("read the %s password: %w", name, err)
	}
	return string(data), nil
}

// serverVersion runs the server binary with --version and parses the
// version it prints ("mariadbd  Ver 10.11.14-MariaDB-0+deb12u2 for ...").
func serverVersion(server string) (dbop.Version, error) {
	out, err := exec.Command(server, "--version").Output()
	if err != nil {
		return dbop.Version{}, fmt.Errorf("%s --version: %w", server, err)
	}
	f := strings.Fields(string(out))
	for i, w := range f {
		if w == "Ver" && i+1 < len(f) {
			return dbop.ParseVersion(f[i+1])
		}
	}
	return dbop.Version{}, fmt.Errorf("%s --version printed no version: %q", server, out)
}

// lookPath returns the first of the names found on PATH.
func lookPath(names ...string) (string, error) {
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("none of %s found on PATH", strings.Join(names, ", "))
}
