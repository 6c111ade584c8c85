package sqlobjects

import (
	"context"
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/certs"
	"github.com/example/mysql-operator/controller/children"
	"github.com/example/mysql-operator/controller/vocabulary"
	"github.com/example/mysql-operator/dbop"
)

// The target of a database, user or grant: its MySQL's current primary,
// reached at its pod's address as the operator's admin account, and only
// once the server itself confirms it is a writable source. A replica never
// receives DDL directly.

// mysqlWaitRetry is how soon an object waiting for its MySQL is tried
// again; the MySQL watch usually wakes it sooner.
const mysqlWaitRetry = 30 * time.Second

// sqlWaitRetry is how soon a grant waiting for its account is tried
// again; the account's MySQLUser becoming ready wakes it sooner.
const sqlWaitRetry = 10 * time.Second

// primaryCheckTimeout bounds the status query that confirms the primary.
const primaryCheckTimeout = 5 * time.Second

// sqlTarget is the primary a reconcile changes.
type sqlTarget struct {
	// mysql is the MySQL, pod its primary's pod name.
	mysql *databasev1.MySQL
	pod   string
	// db is the connection to the primary.
	db *dbop.Instance
}

// readyPrimary returns the pod name of m's primary when status says it is
// ready, else "".
func readyPrimary(m *databasev1.MySQL) string {
	if m.Status.CurrentPrimary == "" {
		return ""
	}
	for _, s := range m.Status.Instances {
		if s.Name == m.Status.CurrentPrimary && s.Role == databasev1.RolePrimary && s.Ready {
			return s.Name
		}
	}
	return ""
}

// mysqlOf returns the MySQL name in ns, or nil when it does not exist.
func (r *Reconciler) mysqlOf(ctx context.Context, ns, name string) (*databasev1.MySQL, error) {
	m := &databasev1.MySQL{}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, m)
	if apierrors.IsNotFound(err) {
		r.pool.Release(client.ObjectKey{Namespace: ns, Name: name}.String())
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("get MySQL %s: %w", name, err)
	}
	return m, nil
}

// target returns the writable primary of the MySQL name in ns, or a
// waitError saying what is missing.
func (r *Reconciler) target(ctx context.Context, ns, name string) (*sqlTarget, error) {
	m, err := r.mysqlOf(ctx, ns, name)
	switch {
	case err != nil:
		return nil, err
	case m == nil:
		return nil, waiting(vocabulary.ReasonMySQLNotFound, mysqlWaitRetry, "MySQL %s does not exist in namespace %s", name, ns)
	case !m.DeletionTimestamp.IsZero():
		return nil, waiting(vocabulary.ReasonMySQLNotReady, mysqlWaitRetry, "MySQL %s is being deleted", name)
	}
	primary := readyPrimary(m)
	if primary == "" {
		return nil, waiting(vocabulary.ReasonMySQLNotReady, mysqlWaitRetry, "MySQL %s has no ready primary yet", name)
	}
	db, err := r.connect(ctx, m, primary)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, primaryCheckTimeout)
	defer cancel()
	st, err := db.Status(ctx)
	if err != nil {
		return nil, fmt.Errorf("check the primary %s: %w", primary, err)
	}
	if st.ReadOnly || st.Replica != nil {
		return nil, waiting(vocabulary.ReasonMySQLNotReady, mysqlWaitRetry, "%s is not a writable source yet: a change of primary is under way", primary)
	}
	return &sqlTarget{mysql: m, pod: primary, db: db}, nil
}

// connect returns the connection to the pod of m as the operator's admin,
// whose password is in m's operator Secret (cached: the operator owns it).
func (r *Reconciler) connect(ctx context.Context, m *databasev1.MySQL, podName string) (*dbop.Instance, error) {
	pod := &corev1.Pod{}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: m.Namespace, Name: podName}, pod)
	if apierrors.IsNotFound(err) || (err == nil && pod.Status.PodIP == "") {
		return nil, waiting(vocabulary.ReasonMySQLNotReady, mysqlWaitRetry, "the primary's pod %s has no address yet", podName)
	}
	if err != nil {
		return nil, fmt.Errorf("get pod %s: %w", podName, err)
	}
	secret := &corev1.Secret{}
	err = r.Client.Get(ctx, client.ObjectKey{Namespace: m.Namespace, Name: children.OperatorSecretName(m)}, secret)
	if apierrors.IsNotFound(err) || (err == nil && len(secret.Data[children.AdminPasswordKey]) == 0) {
		return nil, waiting(vocabulary.ReasonMySQLNotReady, mysqlWaitRetry, "the operator's Secret %s is not there yet", children.OperatorSecretName(m))
	}
	if err != nil {
		return nil, fmt.Errorf("get Secret %s: %w", children.OperatorSecretName(m), err)
	}
	ca, err := r.serverCA(ctx, m)
	if err != nil {
		return nil, err
	}
	addr := pod.Status.PodIP + ":" + strconv.Itoa(children.MySQLPort)
	r.pool.Keep(client.ObjectKeyFromObject(m).String(), []string{addr})
	cred := dbop.Credentials{User: dbop.AdminUser, Password: string(secret.Data[children.AdminPasswordKey])}
	return r.pool.Get(addr, children.WithTLS(m, cred, ca, pod))
}

// serverCA is the CA of m's servers' certificate (cached: the operator
// owns its Secret), nil while TLS is disabled.
func (r *Reconciler) serverCA(ctx context.Context, m *databasev1.MySQL) ([]byte, error) {
	if databasev1.TLSModeOf(m) == databasev1.TLSDisabled {
		return nil, nil
	}
	secret := &corev1.Secret{}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: m.Namespace, Name: children.TLSSecretName(m)}, secret)
	if apierrors.IsNotFound(err) || (err == nil && len(secret.Data[certs.CAKey]) == 0) {
		return nil, waiting(vocabulary.ReasonMySQLNotReady, mysqlWaitRetry, "the certificate Secret %s is not there yet", children.TLSSecretName(m))
	}
	if err != nil {
		return nil, fmt.Errorf("get Secret %s: %w", children.TLSSecretName(m), err)
	}
	return secret.Data[certs.CAKey], nil
}

// primaryState is what of a MySQL its databases, users and grants depend
// on: whether it is being deleted, and its ready primary.
func primaryState(m *databasev1.MySQL) string {
	if !m.DeletionTimestamp.IsZero() {
		return "deleting"
	}
	return readyPrimary(m)
}

// primaryChanged lets through the MySQL events that matter to its SQL
// objects: created, deleted, or a change of primaryState. A MySQL's status
// moves with every replica; that wakes none of them.
var primaryChanged = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		oldM, okOld := e.ObjectOld.(*databasev1.MySQL)
		newM, okNew := e.ObjectNew.(*databasev1.MySQL)
		return !okOld || !okNew || primaryState(oldM) != primaryState(newM)
	},
}
