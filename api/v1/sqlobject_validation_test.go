package v1_test

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/internal/testenv"
)

func sqlObject(kind, name string, spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	u.SetGroupVersionKind(databasev1.GroupVersion.WithKind(kind))
	u.SetName(name)
	u.SetNamespace("default")
	return u
}

// with returns a copy of base with the fields of more set.
func with(base map[string]any, more map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range base {
		out[k] = v
	}
	for k, v := range more {
		out[k] = v
	}
	return out
}

var (
	ref          = map[string]any{"name": "db"}
	databaseSpec = map[string]any{"mysqlRef": ref}
	userSpec     = map[string]any{"mysqlRef": ref, "passwordSecretRef": map[string]any{"name": "app-pw"}}
	grantSpec    = map[string]any{"mysqlRef": ref, "user": "app", "database": "app", "privileges": []any{"SELECT"}}
)

// TestSQLObjectValidation installs the generated CRDs of MySQLDatabase,
// MySQLUser and MySQLGrant into a real kube-apiserver: invalid objects and
// changes of identity fields are refused with a message naming the field,
// awkward but valid names are accepted, defaults are applied.
func TestSQLObjectValidation(t *testing.T) {
	env := testenv.Start(t)
	c := env.Client
	creates := []struct {
		name, kind, objName string
		spec                map[string]any
		wantErr             string
	}{
		{"database minimal", databasev1.MySQLDatabaseKind, "", databaseSpec, ""},
		{"database awkward name", databasev1.MySQLDatabaseKind, "", with(databaseSpec, map[string]any{"name": "o'brien`s %_db ünï日本"}), ""},
		{"database without mysqlRef", databasev1.MySQLDatabaseKind, "", map[string]any{"name": "x"}, "spec.mysqlRef: Required"},
		{"database name outside the BMP", databasev1.MySQLDatabaseKind, "", with(databaseSpec, map[string]any{"name": "db😀"}), "name: cannot contain NUL or characters outside"},
		{"database name with NUL", databasev1.MySQLDatabaseKind, "", with(databaseSpec, map[string]any{"name": "a\x00b"}), "name: cannot contain NUL"},
		{"database name ending with a space", databasev1.MySQLDatabaseKind, "", with(databaseSpec, map[string]any{"name": "a "}), "name: cannot end with a space"},
		{"database name too long", databasev1.MySQLDatabaseKind, "", with(databaseSpec, map[string]any{"name": strings.Repeat("d", 65)}), "spec.name"},
		{"database mysql", databasev1.MySQLDatabaseKind, "", with(databaseSpec, map[string]any{"name": "MySQL"}), "spec.name: mysql, information_schema"},
		{"database sys by metadata.name", databasev1.MySQLDatabaseKind, "sys", databaseSpec, "spec.name: mysql, information_schema"},
		{"database of the operator", databasev1.MySQLDatabaseKind, "", with(databaseSpec, map[string]any{"name": "mysql_operator"}), "mysql_operator the operator's"},
		{"database long metadata.name", databasev1.MySQLDatabaseKind, strings.Repeat("d", 65), databaseSpec, "spec.name: required when metadata.name is longer than 64"},
		{"database bad character set", databasev1.MySQLDatabaseKind, "", with(databaseSpec, map[string]any{"characterSet": "utf8mb4; DROP"}), "spec.characterSet"},
		{"database bad deletionPolicy", databasev1.MySQLDatabaseKind, "", with(databaseSpec, map[string]any{"deletionPolicy": "Shred"}), "spec.deletionPolicy"},
		{"user minimal", databasev1.MySQLUserKind, "", userSpec, ""},
		{"user awkward", databasev1.MySQLUserKind, "", with(userSpec, map[string]any{"name": "o'brien`%", "host": "10.0.%"}), ""},
		{"user without Secret", databasev1.MySQLUserKind, "", map[string]any{"mysqlRef": ref}, "spec.passwordSecretRef: Required"},
		{"user root", databasev1.MySQLUserKind, "", with(userSpec, map[string]any{"name": "root"}), "spec.name: root, the server's system accounts"},
		{"user of the operator", databasev1.MySQLUserKind, "mysqlop-admin", userSpec, "spec.name: root, the server's system accounts"},
		{"user name too long", databasev1.MySQLUserKind, "", with(userSpec, map[string]any{"name": strings.Repeat("u", 33)}), "spec.name"},
		{"user negative connections", databasev1.MySQLUserKind, "", with(userSpec, map[string]any{"maxUserConnections": -1}), "spec.maxUserConnections"},
		{"grant minimal", databasev1.MySQLGrantKind, "", grantSpec, ""},
		{"grant on a table", databasev1.MySQLGrantKind, "", with(grantSpec, map[string]any{"table": "t`1", "privileges": []any{"SELECT", "UPDATE"}}), ""},
		{"grant on every database", databasev1.MySQLGrantKind, "", with(grantSpec, map[string]any{"database": "*", "privileges": []any{"SELECT", "SHOW VIEW"}}), ""},
		{"grant unknown privilege", databasev1.MySQLGrantKind, "", with(grantSpec, map[string]any{"privileges": []any{"SELECT", "SUPER"}}), "spec.privileges[1]: Unsupported value"},
		{"grant lower-case privilege", databasev1.MySQLGrantKind, "", with(grantSpec, map[string]any{"privileges": []any{"select"}}), "spec.privileges[0]: Unsupported value"},
		{"grant no privilege", databasev1.MySQLGrantKind, "", with(grantSpec, map[string]any{"privileges": []any{}}), "spec.privileges"},
		{"grant duplicate privilege", databasev1.MySQLGrantKind, "", with(grantSpec, map[string]any{"privileges": []any{"SELECT", "SELECT"}}), "spec.privileges[1]: Duplicate value"},
		{"grant table of every database", databasev1.MySQLGrantKind, "", with(grantSpec, map[string]any{"database": "*", "table": "t"}), "table: a table grant needs a database"},
		{"grant ALL on every database", databasev1.MySQLGrantKind, "", with(grantSpec, map[string]any{"database": "*", "privileges": []any{"ALL PRIVILEGES"}}), "privileges: ALL PRIVILEGES on every database"},
		{"grant routine privilege on a table", databasev1.MySQLGrantKind, "", with(grantSpec, map[string]any{"table": "t", "privileges": []any{"EXECUTE"}}), "privileges: ALTER ROUTINE, CREATE ROUTINE"},
		{"grant to the operator", databasev1.MySQLGrantKind, "", with(grantSpec, map[string]any{"user": "mysqlop-repl"}), "user: root, the server's system accounts"},
		{"grant without user", databasev1.MySQLGrantKind, "", map[string]any{"mysqlRef": ref, "database": "app", "privileges": []any{"SELECT"}}, "spec.user: Required"},
	}
	for i, tt := range creates {
		t.Run("create/"+tt.name, func(t *testing.T) {
			name := tt.objName
			if name == "" {
				name = fmt.Sprintf("create-%d", i)
			}
			err := c.Create(context.Background(), sqlObject(tt.kind, name, tt.spec))
			checkErr(t, err, tt.wantErr)
		})
	}
	t.Run("defaults", func(t *testing.T) { testSQLDefaults(t, c) })
	t.Run("updates", func(t *testing.T) { testSQLUpdates(t, c) })
	t.Run("kubectl", func(t *testing.T) { testSQLColumns(t, env) })
}

// checkErr fails unless err is nil when wantErr is empty, or names wantErr.
func checkErr(t *testing.T, err error, wantErr string) {
	t.Helper()
	switch {
	case wantErr == "" && err != nil:
		t.Fatalf("valid request refused: %v", err)
	case wantErr != "" && err == nil:
		t.Fatalf("invalid request accepted, want an error naming %q", wantErr)
	case wantErr != "" && !strings.Contains(err.Error(), wantErr):
		t.Fatalf("error %q does not name %q", err, wantErr)
	}
}

func testSQLDefaults(t *testing.T, c client.Client) {
	ctx := context.Background()
	for _, o := range []*unstructured.Unstructured{sqlObject(databasev1.MySQLDatabaseKind, "defaults", databaseSpec),
		sqlObject(databasev1.MySQLUserKind, "defaults", userSpec), sqlObject(databasev1.MySQLGrantKind, "defaults", grantSpec)} {
		if err := c.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	db := &databasev1.MySQLDatabase{}
	user := &databasev1.MySQLUser{}
	grant := &databasev1.MySQLGrant{}
	for _, o := range []client.Object{db, user, grant} {
		if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "defaults"}, o); err != nil {
			t.Fatal(err)
		}
	}
	if db.Spec.DeletionPolicy != databasev1.DeletionRetain || db.DatabaseName() != "defaults" || db.Status.ObservedGeneration != -1 {
		t.Errorf("database defaults: deletionPolicy=%q name=%q observedGeneration=%d", db.Spec.DeletionPolicy, db.DatabaseName(), db.Status.ObservedGeneration)
	}
	if user.Spec.Host != "%" || user.Spec.PasswordSecretRef.Key != "password" || user.Spec.DeletionPolicy != databasev1.DeletionDelete ||
		user.UserName() != "defaults" || user.Status.ObservedGeneration != -1 {
		t.Errorf("user defaults: host=%q key=%q deletionPolicy=%q name=%q observedGeneration=%d", user.Spec.Host,
			user.Spec.PasswordSecretRef.Key, user.Spec.DeletionPolicy, user.UserName(), user.Status.ObservedGeneration)
	}
	if grant.Spec.Host != "%" || grant.Spec.Table != "*" || grant.Status.ObservedGeneration != -1 {
		t.Errorf("grant defaults: host=%q table=%q observedGeneration=%d", grant.Spec.Host, grant.Spec.Table, grant.Status.ObservedGeneration)
	}
}

func testSQLUpdates(t *testing.T, c client.Client) {
	ctx := context.Background()
	updates := []struct {
		name, kind    string
		before, after map[string]any
		wantErr       string
	}{
		{"database mysqlRef", databasev1.MySQLDatabaseKind, databaseSpec, with(databaseSpec, map[string]any{"mysqlRef": map[string]any{"name": "other"}}), "mysqlRef: is immutable"},
		{"database name", databasev1.MySQLDatabaseKind, with(databaseSpec, map[string]any{"name": "a"}), with(databaseSpec, map[string]any{"name": "b"}), "spec.name: is immutable"},
		{"database name set", databasev1.MySQLDatabaseKind, databaseSpec, with(databaseSpec, map[string]any{"name": "b"}), "spec.name: is immutable"},
		{"database name spelled out (update-3 is its metadata.name)", databasev1.MySQLDatabaseKind, databaseSpec, with(databaseSpec, map[string]any{"name": "update-3"}), ""},
		{"database collation", databasev1.MySQLDatabaseKind, databaseSpec, with(databaseSpec, map[string]any{"collation": "utf8mb4_bin", "deletionPolicy": "Delete"}), ""},
		{"user host", databasev1.MySQLUserKind, userSpec, with(userSpec, map[string]any{"host": "10.%"}), "host: is immutable"},
		{"user name", databasev1.MySQLUserKind, userSpec, with(userSpec, map[string]any{"name": "other"}), "spec.name: is immutable"},
		{"user mysqlRef", databasev1.MySQLUserKind, userSpec, with(userSpec, map[string]any{"mysqlRef": map[string]any{"name": "other"}}), "mysqlRef: is immutable"},
		{"user password Secret and limits", databasev1.MySQLUserKind, userSpec, with(userSpec, map[string]any{"passwordSecretRef": map[string]any{"name": "new-pw", "key": "pw"},
			"maxUserConnections": 5, "requireTLS": true}), ""},
		{"grant user", databasev1.MySQLGrantKind, grantSpec, with(grantSpec, map[string]any{"user": "other"}), "user: is immutable"},
		{"grant host", databasev1.MySQLGrantKind, grantSpec, with(grantSpec, map[string]any{"host": "localhost"}), "host: is immutable"},
		{"grant database", databasev1.MySQLGrantKind, grantSpec, with(grantSpec, map[string]any{"database": "other"}), "database: is immutable"},
		{"grant table", databasev1.MySQLGrantKind, grantSpec, with(grantSpec, map[string]any{"table": "t"}), "table: is immutable"},
		{"grant privileges", databasev1.MySQLGrantKind, grantSpec, with(grantSpec, map[string]any{"privileges": []any{"INSERT", "ALL PRIVILEGES"}, "grantOption": true}), ""},
	}
	for i, tt := range updates {
		t.Run(tt.name, func(t *testing.T) {
			obj := sqlObject(tt.kind, fmt.Sprintf("update-%d", i), tt.before)
			if err := c.Create(ctx, obj); err != nil {
				t.Fatal(err)
			}
			obj.Object["spec"] = tt.after
			checkErr(t, c.Update(ctx, obj), tt.wantErr)
		})
	}
}

// testSQLColumns checks the short names and printer columns through the
// real kubectl.
func testSQLColumns(t *testing.T, env *testenv.Env) {
	kubectl := filepath.Join(env.Bin, "kubectl")
	path := env.Kubeconfig(t)
	for short, want := range map[string]string{
		"mydb":    "NAME MYSQL DATABASE READY REASON AGE",
		"myuser":  "NAME MYSQL USER HOST READY REASON AGE",
		"mygrant": "NAME MYSQL USER DATABASE TABLE READY REASON AGE",
	} {
		out, err := exec.Command(kubectl, "--kubeconfig", path, "-n", "default", "get", short, "defaults").CombinedOutput()
		if err != nil {
			t.Fatalf("kubectl get %s: %v\n%s", short, err, out)
		}
		if header := strings.Join(strings.Fields(strings.SplitN(string(out), "\n", 2)[0]), " "); header != want {
			t.Errorf("kubectl get %s columns = %q, want %q", short, header, want)
		}
	}
}
