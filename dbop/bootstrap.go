package dbop

import (
	"fmt"
	"strings"
)

// The operator's own accounts.
const (
	// AdminUser is the operator's account ('mysqlop-admin'@'%'): replication
	// control, user and grant management, killing connections, read-only, clone.
	AdminUser = "mysqlop-admin"
	// ReplUser is the replication account ('mysqlop-repl'@'%'), REPLICATION SLAVE
	// only.
	ReplUser = "mysqlop-repl"
	// AgentUser is the in-pod agent's account ('mysqlop-agent'@'localhost', over
	// the unix socket): readiness checks and backups.
	AgentUser = "mysqlop-agent"
)

// BootstrapConfig holds the passwords the bootstrap file sets. All are required.
type BootstrapConfig struct {
	// RootPassword is set on root@localhost and root@'%'.
	RootPassword string
	// AdminPassword is AdminUser's password.
	AdminPassword string
	// ReplPassword is ReplUser's password.
	ReplPassword string
	// AgentPassword is AgentUser's password.
	AgentPassword string
}

// bootstrapAccount is one account the bootstrap file creates and its grants.
type bootstrapAccount struct {
	user, host, password string
	grants               []string // "<privileges> ON <level>", WITH GRANT OPTION added by grantOption
	grantOption          bool
}

// accounts returns the accounts of cfg with the dialect's privileges.
func (cfg BootstrapConfig) accounts(agentPrivs []string) ([]bootstrapAccount, error) {
	for name, pw := range map[string]string{"root": cfg.RootPassword, "admin": cfg.AdminPassword,
		"replication": cfg.ReplPassword, "agent": cfg.AgentPassword} {
		if pw == "" {
			return nil, fmt.Errorf("bootstrap: %s password is empty", name)
		}
	}
	return []bootstrapAccount{
		{user: "root", host: "%", password: cfg.RootPassword, grants: []string{"ALL PRIVILEGES ON *.*"}, grantOption: true},
		{user: AdminUser, host: "%", password: cfg.AdminPassword, grants: []string{"ALL PRIVILEGES ON *.*"}, grantOption: true},
		{user: ReplUser, host: "%", password: cfg.ReplPassword, grants: []string{"REPLICATION SLAVE ON *.*"}},
		{user: AgentUser, host: "localhost", password: cfg.AgentPassword, grants: agentPrivs},
	}, nil
}

// pinSQLMode makes the backslash escapes of QuoteString meaningful whatever the
// server's default sql_mode.
const pinSQLMode = "SET SESSION sql_mode = REPLACE(@@SESSION.sql_mode, 'NO_BACKSLASH_ESCAPES', '');"

// renderAccounts writes ALTER USER for root@localhost, then CREATE USER and GRANT
// for every account, one statement per line, values through QuoteString; with
// replace, DROP USER IF EXISTS before each CREATE USER, for a data directory
// that has the accounts already.
func renderAccounts(b *strings.Builder, cfg BootstrapConfig, accts []bootstrapAccount, replace bool) error {
	pw, err := QuoteString(cfg.RootPassword)
	if err != nil {
		return fmt.Errorf("bootstrap: root password: %w", err)
	}
	fmt.Fprintf(b, "ALTER USER 'root'@'localhost' IDENTIFIED BY %s;\n", pw)
	for _, a := range accts {
		acct, err := QuoteAccount(a.user, a.host)
		if err != nil {
			return fmt.Errorf("bootstrap: %w", err)
		}
		pw, err := QuoteString(a.password)
		if err != nil {
			return fmt.Errorf("bootstrap: password of %s: %w", a.user, err)
		}
		if replace {
			fmt.Fprintf(b, "DROP USER IF EXISTS %s;\n", acct)
		}
		fmt.Fprintf(b, "CREATE USER %s IDENTIFIED BY %s;\n", acct, pw)
		for _, g := range a.grants {
			opt := ""
			if a.grantOption {
				opt = " WITH GRANT OPTION"
			}
			fmt.Fprintf(b, "GRANT %s TO %s%s;\n", g, acct, opt)
		}
	}
	return nil
}

// Bootstrap renders the file mariadb-install-db --extra-file=FILE runs on a new data
// directory. With binary logging off (no GTID is created) it removes every account
// but root@localhost, mariadb.sys and the PUBLIC role (anonymous users, root@<host>,
// root@127.0.0.1 and the like), the test database, sets root's password, creates
// root@'%' and the operator's accounts, and revokes READ_ONLY ADMIN (part of ALL
// PRIVILEGES on 10.11, it lets a user write on a read_only replica) from both root
// accounts: only AdminUser keeps it.
func (mariadbDialect) Bootstrap(cfg BootstrapConfig) (string, error) {
	accts, err := cfg.accounts(mariadbAgentPrivileges)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("-- mysql-operator bootstrap (MariaDB): mariadb-install-db --extra-file=<this file>\n")
	b.WriteString(pinSQLMode + "\nSET sql_log_bin = 0;\n")
	b.WriteString("DELETE FROM mysql.global_priv WHERE NOT ((User = 'root' AND Host = 'localhost') OR " +
		"(User = 'mariadb.sys' AND Host = 'localhost') OR (User = 'PUBLIC' AND Host = ''));\n")
	b.WriteString("DELETE FROM mysql.proxies_priv WHERE NOT (User = 'root' AND Host = 'localhost');\n")
	b.WriteString("DELETE FROM mysql.db WHERE User = '' OR Db = 'test' OR Db LIKE 'test\\\\_%';\n")
	b.WriteString("DROP DATABASE IF EXISTS test;\nFLUSH PRIVILEGES;\n")
	if err := renderAccounts(&b, cfg, accts, false); err != nil {
		return "", err
	}
	b.WriteString("REVOKE READ_ONLY ADMIN ON *.* FROM 'root'@'localhost', 'root'@'%';\n")
	return b.String(), nil
}

// Bootstrap renders the file mysqld --initialize-insecure --init-file=FILE runs on a
// new data directory: binary logging off, anonymous users and the test database
// removed (8.4 creates neither), root's password set, root@'%' and the operator's
// accounts created. super_read_only stops every account on a replica, so no
// privilege needs revoking.
func (mysqlDialect) Bootstrap(cfg BootstrapConfig) (string, error) {
	accts, err := cfg.accounts(mysqlAgentPrivileges)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("-- mysql-operator bootstrap (MySQL): mysqld --initialize-insecure --init-file=<this file>\n")
	b.WriteString(pinSQLMode + "\nSET sql_log_bin = 0;\n")
	b.WriteString("DELETE FROM mysql.user WHERE User = '';\nDROP DATABASE IF EXISTS test;\nFLUSH PRIVILEGES;\n")
	if err := renderAccounts(&b, cfg, accts, false); err != nil {
		return "", err
	}
	return b.String(), nil
}

// mariadbAgentPrivileges and mysqlAgentPrivileges are the grants of AgentUser:
// probes, backups and the binary log archive.
var (
	mariadbAgentPrivileges = []string{"RELOAD, PROCESS, LOCK TABLES, BINLOG MONITOR, SLAVE MONITOR ON *.*"}
	mysqlAgentPrivileges   = []string{
		"RELOAD, PROCESS, LOCK TABLES, REPLICATION CLIENT, BACKUP_ADMIN ON *.*",
		"SELECT ON performance_schema.*",
	}
)

// restoreAccounts renders the init file of a server started on a restored
// data directory: with binary logging off, the operator's accounts of the
// backup's MySQL are replaced by this MySQL's (its passwords are in this
// MySQL's Secrets); every other account is the backup's.
func restoreAccounts(engine string, cfg BootstrapConfig, agentPrivs []string, tail string) (string, error) {
	accts, err := cfg.accounts(agentPrivs)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "-- mysql-operator restored accounts (%s): --init-file=<this file>\n", engine)
	b.WriteString(pinSQLMode + "\nSET sql_log_bin = 0;\n")
	if err := renderAccounts(&b, cfg, accts, true); err != nil {
		return "", err
	}
	b.WriteString(tail)
	return b.String(), nil
}

// RestoreAccounts renders the init file of a restored data directory
// (restoreAccounts), READ_ONLY ADMIN revoked from root as Bootstrap does.
func (mariadbDialect) RestoreAccounts(cfg BootstrapConfig) (string, error) {
	return restoreAccounts("MariaDB", cfg, mariadbAgentPrivileges, "REVOKE READ_ONLY ADMIN ON *.* FROM 'root'@'localhost', 'root'@'%';\n")
}

// RestoreAccounts renders the init file of a restored data directory
// (restoreAccounts).
func (mysqlDialect) RestoreAccounts(cfg BootstrapConfig) (string, error) {
	return restoreAccounts("MySQL", cfg, mysqlAgentPrivileges, "")
}
