package agent

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/example/mysql-operator/backup"
	"github.com/example/mysql-operator/dbop"
	"github.com/example/mysql-operator/internal/dbtest"
	"github.com/example/mysql-operator/internal/s3test"
	"github.com/example/mysql-operator/objstore"
)

// instance is a real MariaDB server with the operator's accounts, and the
// agent's Config of it.
type instance struct {
	t      testing.TB
	server *dbtest.Server
	c      Config
	pw     dbop.BootstrapConfig
}

// startInstance starts a server bootstrapped with passwords pw (a suffix
// makes them this instance's own), with its password files.
func startInstance(t testing.TB, suffix string, config ...string) *instance {
	t.Helper()
	pw := dbop.BootstrapConfig{RootPassword: "root'" + suffix, AdminPassword: "admin;" + suffix,
		ReplPassword: "repl" + suffix, AgentPassword: "agent%" + suffix}
	boot, err := dbop.MariaDB.Bootstrap(pw)
	if err != nil {
		t.Fatal(err)
	}
	s := dbtest.Start(t, 1, dbtest.Config{Bootstrap: boot, ExtraConfig: config})[0]
	return &instance{t: t, server: s, pw: pw, c: Config{DataDir: s.DataDir, Socket: s.Socket,
		Secrets: writeSecrets(t, pw), ServerConfig: filepath.Join(s.Dir, "my.cnf"), ReportHost: "db-0.db.ns.svc"}}
}

// writeSecrets writes the password files of pw.
func writeSecrets(t testing.TB, pw dbop.BootstrapConfig) string {
	dir := t.TempDir()
	for name, v := range map[string]string{RootPasswordFile: pw.RootPassword, AdminPasswordFile: pw.AdminPassword,
		ReplPasswordFile: pw.ReplPassword, AgentPasswordFile: pw.AgentPassword} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(v), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// storageDir writes a storage directory: file holding v as JSON, and the
// credentials of cfg.
func storageDir(t testing.TB, file string, v any, cfg objstore.Config) string {
	dir := t.TempDir()
	for name, content := range map[string][]byte{file: backup.Marshal(v),
		objstore.AccessKeyIDFile: []byte(cfg.AccessKeyID), objstore.SecretAccessKeyFile: []byte(cfg.SecretAccessKey + "\n")} {
		if err := os.WriteFile(filepath.Join(dir, name), content, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// db opens the instance as the admin, over TCP.
func (in *instance) db() *sql.DB {
	return openDB(in.t, in.server, dbop.AdminUser, in.pw.AdminPassword)
}

// openDB opens s as user.
func openDB(t testing.TB, s *dbtest.Server, user, password string) *sql.DB {
	t.Helper()
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.InterpolateParams = user, password, "tcp", s.Addr(), true
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(connector)
	t.Cleanup(func() { db.Close() })
	return db
}

// execSQL runs statements, failing the test on an error.
func execSQL(t testing.TB, db *sql.DB, stmts ...string) {
	t.Helper()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// scalar reads one value.
func scalar(t testing.TB, db *sql.DB, query string) string {
	t.Helper()
	var v sql.NullString
	if err := db.QueryRow(query).Scan(&v); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return v.String
}

// insertRows inserts rows from..to into shop.t, one transaction each.
func insertRows(t testing.TB, db *sql.DB, from, to int) {
	t.Helper()
	for n := from; n <= to; n++ {
		execSQL(t, db, "INSERT INTO shop.t VALUES ("+strconv.Itoa(n)+")")
	}
}

// owner is the test's MySQL.
var owner = backup.Owner{Namespace: "ns", Name: "db", UID: "uid-1"}

// withBackups gives the instance a backup config of storage.
func (in *instance) withBackups(storage objstore.Config, delay time.Duration) {
	in.c.BackupDir = storageDir(in.t, backup.ConfigFile,
		backup.PodConfig{Storage: storage, Owner: owner, ArchiveMaxDelay: backup.Duration(delay)}, storage)
}

// restoreInto restores target from storage into a new data directory with
// the passwords of a new MySQL, then starts a server on it.
func restoreInto(t testing.TB, storage objstore.Config, target backup.Target, server *dbtest.Server) (*dbtest.Server, dbop.BootstrapConfig, error) {
	t.Helper()
	pw := dbop.BootstrapConfig{RootPassword: "new-root", AdminPassword: "new-admin", ReplPassword: "new-repl", AgentPassword: "new-agent"}
	dir := t.TempDir()
	c := Config{DataDir: filepath.Join(dir, "data"), Socket: filepath.Join(dir, "mysqld.sock"), Secrets: writeSecrets(t, pw),
		ServerConfig: filepath.Join(server.Dir, "my.cnf"),
		RestoreDir:   storageDir(t, backup.RestoreFile, backup.RestoreConfig{Storage: storage, Target: target}, storage)}
	mariadbd := dbtest.Binary(t, "mariadbd")
	v, err := serverVersion(mariadbd)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.restore(context.Background(), mariadbd, v); err != nil {
		if _, statErr := os.Stat(c.DataDir); statErr == nil {
			t.Errorf("a failed restore left a data directory")
		}
		return nil, pw, err
	}
	res, found, err := c.Restored()
	if err != nil || !found {
		t.Fatalf("no restore result: %v", err)
	}
	raw, _ := json.Marshal(res)
	t.Logf("restored: %s", raw)
	return dbtest.StartFromDataDir(t, c.DataDir, 11, dbtest.Config{}), pw, nil
}

// newStore is the store of cfg.
func newStore(t testing.TB, cfg objstore.Config) *objstore.Store {
	s, err := objstore.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// startS3 starts versitygw with a bucket and returns the config of a prefix in it.
func startS3(t testing.TB) (*s3test.Server, objstore.Config) {
	s := s3test.Start(t)
	return s, s.Bucket(t, "backups", "mysql/db")
}
