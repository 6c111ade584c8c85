package sqlobjects

import (
	"errors"
	"reflect"
	"testing"

	"github.com/fluxcd/pkg/runtime/conditions"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/controller/outcome"
	"github.com/example/mysql-operator/controller/vocabulary"
	"github.com/example/mysql-operator/dbop"
)

// TestJudgeSQLStatus judges the status of a database, user or grant from
// each outcome of a reconcile, and checks what kstatus reads from it.
func TestJudgeSQLStatus(t *testing.T) {
	stalledBefore := []metav1.Condition{
		{Type: databasev1.ConditionStalled, Status: metav1.ConditionTrue, Reason: vocabulary.ReasonSecretNotFound, Message: "gone"},
		{Type: databasev1.ConditionReady, Status: metav1.ConditionFalse, Reason: vocabulary.ReasonSecretNotFound, Message: "gone"},
	}
	tests := []struct {
		name        string
		observedGen int64
		before      []metav1.Condition
		err         error
		wantReady   metav1.ConditionStatus
		wantReason  string
		wantMessage string
		wantGen     int64
		wantKstatus status.Status
	}{
		{"applied", -1, nil, nil, metav1.ConditionTrue, vocabulary.ReasonSucceeded, "Database \"app\" is on the primary db-0", 3, status.CurrentStatus},
		{"waiting for the MySQL", -1, nil, waiting(vocabulary.ReasonMySQLNotReady, mysqlWaitRetry, "MySQL db has no ready primary yet"),
			metav1.ConditionFalse, vocabulary.ReasonMySQLNotReady, "MySQL db has no ready primary yet", 3, status.InProgressStatus},
		{"stalled", 2, nil, outcome.Stalled(vocabulary.ReasonSecretNotFound, "passwordSecretRef: Secret pw not found in namespace ns"),
			metav1.ConditionFalse, vocabulary.ReasonSecretNotFound, "passwordSecretRef: Secret pw not found in namespace ns", 3, status.FailedStatus},
		{"refused by the server", 2, nil, refused(errors.Join(errors.New("alter database on 10.0.0.1:3306"), dbop.ErrInvalid)),
			metav1.ConditionFalse, vocabulary.ReasonSQLRejected, "alter database on 10.0.0.1:3306\ninvalid request", 3, status.FailedStatus},
		{"retried error", 2, nil, errors.New("check the primary db-0: connection refused"),
			metav1.ConditionFalse, vocabulary.ReasonRetrying, "check the primary db-0: connection refused", 2, status.InProgressStatus},
		{"recovered from a stall", 3, stalledBefore, nil, metav1.ConditionTrue, vocabulary.ReasonSucceeded, "Database \"app\" is on the primary db-0", 3, status.CurrentStatus},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := &databasev1.MySQLDatabase{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: "ns", Generation: 3},
				Status: databasev1.SQLObjectStatus{ObservedGeneration: tt.observedGen, Conditions: tt.before}}
			before := obj.DeepCopy()
			got := judgeSQLStatus(obj, databaseKind{}.status, &sqlObservation{ready: "Database \"app\" is on the primary db-0"}, tt.err)
			if !reflect.DeepEqual(obj, before) {
				t.Error("judgeSQLStatus changed the object it judged")
			}
			judged := &databasev1.MySQLDatabase{ObjectMeta: obj.ObjectMeta, Status: got}
			ready := conditions.Get(judged, databasev1.ConditionReady)
			if ready == nil || ready.Status != tt.wantReady || ready.Reason != tt.wantReason || ready.Message != tt.wantMessage {
				t.Errorf("Ready = %+v, want %s %s %q", ready, tt.wantReady, tt.wantReason, tt.wantMessage)
			}
			if got.ObservedGeneration != tt.wantGen {
				t.Errorf("observedGeneration = %d, want %d", got.ObservedGeneration, tt.wantGen)
			}
			if ks := sqlKstatus(t, judged); ks != tt.wantKstatus {
				t.Errorf("kstatus = %s, want %s", ks, tt.wantKstatus)
			}
		})
	}
}

// sqlKstatus computes what kstatus reads from obj.
func sqlKstatus(t *testing.T, obj runtime.Object) status.Status {
	t.Helper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetGroupVersionKind(databasev1.GroupVersion.WithKind(databasev1.MySQLDatabaseKind))
	res, err := status.Compute(u)
	if err != nil {
		t.Fatal(err)
	}
	return res.Status
}

func TestGrantDiff(t *testing.T) {
	g := func(opt bool, privs ...string) dbop.Grant {
		return dbop.Grant{Database: "app", Table: "*", Privileges: privs, GrantOption: opt}
	}
	tests := []struct {
		name              string
		have, want        dbop.Grant
		revoke, wantGrant *dbop.Grant
	}{
		{"in order", g(false, "INSERT", "SELECT"), g(false, "INSERT", "SELECT"), nil, nil},
		{"nothing held", g(false), g(false, "SELECT"), nil, &dbop.Grant{Database: "app", Table: "*", Privileges: []string{"SELECT"}}},
		{"a manual REVOKE", g(false, "SELECT"), g(false, "INSERT", "SELECT"), nil,
			&dbop.Grant{Database: "app", Table: "*", Privileges: []string{"INSERT", "SELECT"}}},
		{"a manual GRANT", g(false, "DELETE", "SELECT"), g(false, "SELECT"), &dbop.Grant{Database: "app", Table: "*", Privileges: []string{"DELETE"}}, nil},
		{"narrowed from ALL", g(false, "ALL PRIVILEGES"), g(false, "SELECT"),
			&dbop.Grant{Database: "app", Table: "*", Privileges: []string{"ALL PRIVILEGES"}}, &dbop.Grant{Database: "app", Table: "*", Privileges: []string{"SELECT"}}},
		{"widened to ALL", g(false, "SELECT"), g(false, "ALL PRIVILEGES"), nil,
			&dbop.Grant{Database: "app", Table: "*", Privileges: []string{"ALL PRIVILEGES"}}},
		{"grant option dropped", g(true, "SELECT"), g(false, "SELECT"), &dbop.Grant{Database: "app", Table: "*", GrantOption: true}, nil},
		{"grant option added", g(false, "SELECT"), g(true, "SELECT"), nil,
			&dbop.Grant{Database: "app", Table: "*", Privileges: []string{"SELECT"}, GrantOption: true}},
	}
	for _, tt := range tests {
		revoke, grant := grantDiff(tt.have, tt.want)
		if !reflect.DeepEqual(revoke, tt.revoke) || !reflect.DeepEqual(grant, tt.wantGrant) {
			t.Errorf("%s: revoke %+v, grant %+v; want %+v, %+v", tt.name, revoke, grant, tt.revoke, tt.wantGrant)
		}
	}
}

func TestDatabaseAndUserDrift(t *testing.T) {
	info := dbop.DatabaseInfo{CharacterSet: "utf8mb3", Collation: "utf8mb3_general_ci"}
	for _, tt := range []struct {
		spec  dbop.DatabaseSpec
		drift bool
	}{
		{dbop.DatabaseSpec{}, false},
		{dbop.DatabaseSpec{CharacterSet: "utf8", Collation: "UTF8_general_ci"}, false},
		{dbop.DatabaseSpec{CharacterSet: "utf8mb4"}, true},
		{dbop.DatabaseSpec{Collation: "utf8mb3_bin"}, true},
	} {
		if got := databaseDrift(tt.spec, info); (got != "") != tt.drift {
			t.Errorf("databaseDrift(%+v) = %q, want drift %t", tt.spec, got, tt.drift)
		}
	}
	spec := dbop.UserSpec{Name: "app", Host: "%", Password: "hunter2", MaxUserConnections: 5, RequireSSL: true}
	if got := userDrift(spec, dbop.UserInfo{MaxUserConnections: 5, RequireSSL: true}); got != "" {
		t.Errorf("userDrift of an account in order = %q", got)
	}
	got := userDrift(spec, dbop.UserInfo{})
	if got != "max user connections 5, not 0, require TLS true, not false" {
		t.Errorf("userDrift = %q", got)
	}
	spec.RequireSubject = "/CN=app"
	if got := userDrift(spec, dbop.UserInfo{MaxUserConnections: 5, RequireSubject: "/CN=app"}); got != "" {
		t.Errorf("userDrift of an account with its subject = %q", got)
	}
	if got := userDrift(spec, dbop.UserInfo{MaxUserConnections: 5, RequireSSL: true}); got != `require X.509 subject "/CN=app", not ""` {
		t.Errorf("userDrift of a subject lost = %q", got)
	}
}
