package sqlobjects

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/controller/outcome"
	"github.com/example/mysql-operator/controller/vocabulary"
	"github.com/example/mysql-operator/dbop"
)

// userKind is MySQLUser: an account created on the primary with the
// password of a Secret, created again when dropped, its attributes put
// back when they drift, its password set again when the Secret changes,
// dropped on deletion with deletionPolicy Delete (the default).
type userKind struct{}

func (userKind) name() string                            { return "mysqluser" }
func (userKind) newObject() *databasev1.MySQLUser        { return &databasev1.MySQLUser{} }
func (userKind) mysqlRef(u *databasev1.MySQLUser) string { return u.Spec.MySQLRef.Name }
func (userKind) status(u *databasev1.MySQLUser) *databasev1.SQLObjectStatus {
	return &u.Status.SQLObjectStatus
}

func (userKind) needsCleanup(u *databasev1.MySQLUser) bool {
	return u.Spec.DeletionPolicy != databasev1.DeletionRetain
}

// record keeps the version of the Secret whose password the account has.
func (userKind) record(u *databasev1.MySQLUser, obs *sqlObservation) {
	if obs.passwordVersion != "" {
		u.Status.PasswordSecretVersion = obs.passwordVersion
	}
}

// reservedAccounts are accounts the server or the operator owns: a
// MySQLUser or MySQLGrant must never alter, drop or re-grant them. The CRD
// refuses them too; this guards against an older CRD.
var reservedAccounts = []string{"root", "PUBLIC", "mariadb.sys", "mysql.sys", "mysql.session", "mysql.infoschema"}

// checkAccount stalls on a reserved account name.
func checkAccount(user string) error {
	if slices.Contains(reservedAccounts, user) || strings.HasPrefix(user, "mysqlop-") ||
		user == dbop.AdminUser || user == dbop.ReplUser || user == dbop.AgentUser {
		return outcome.Stalled(vocabulary.ReasonReservedAccount, "account %q is reserved: the server or the operator owns it", user)
	}
	return nil
}

// apply creates the account when it is missing, and alters it when its
// attributes differ from the spec, or its password Secret (or the spec)
// changed since the password was last set. The password is read,
// uncached, only then.
func (userKind) apply(ctx context.Context, p *sqlPass, u *databasev1.MySQLUser, obs *sqlObservation) error {
	if err := checkAccount(u.UserName()); err != nil {
		return err
	}
	version, err := p.r.passwordVersion(ctx, u)
	if err != nil {
		return err
	}
	spec := dbop.UserSpec{Name: u.UserName(), Host: u.UserHost(), MaxUserConnections: int(u.Spec.MaxUserConnections), RequireSSL: u.Spec.RequireTLS,
		RequireSubject: u.Spec.RequireX509Subject}
	info, exists, err := p.db.User(ctx, spec.Name, spec.Host)
	if err != nil {
		return err
	}
	// A new generation may name another Secret or key: its password is set too.
	setPassword := !exists || version != u.Status.PasswordSecretVersion || u.Status.ObservedGeneration != u.Generation
	obs.passwordVersion = u.Status.PasswordSecretVersion
	if setPassword {
		if spec.Password, obs.passwordVersion, err = p.r.readPassword(ctx, u); err != nil {
			return err
		}
	}
	account := fmt.Sprintf("'%s'@'%s'", spec.Name, spec.Host)
	switch {
	case !exists:
		if err := p.db.CreateUser(ctx, spec); err != nil {
			return refused(err)
		}
		p.changed(vocabulary.ActionCreate, "created account %s", account)
		p.r.accountMade(u)
	case setPassword || userDrift(spec, info) != "":
		if err := p.db.AlterUser(ctx, spec, setPassword); err != nil {
			return refused(err)
		}
		p.userChanged(account, setPassword, userDrift(spec, info))
	}
	obs.ready = fmt.Sprintf("Account %s is on the primary %s", account, p.target.pod)
	return nil
}

// userChanged records what an ALTER USER changed. A new password is a
// change of the Secret, never drift: the server cannot show a password.
func (p *sqlPass) userChanged(account string, password bool, drift string) {
	if drift != "" {
		p.changed(vocabulary.ActionAlter, "account %s: %s", account, drift)
	}
	if password {
		p.r.eventf(p.obj, vocabulary.EventSQLChanged, vocabulary.ActionSetPassword, "account %s: password set from Secret %s on %s", account,
			p.obj.(*databasev1.MySQLUser).Spec.PasswordSecretRef.Name, p.target.pod)
	}
}

// cleanUp drops the account (deletionPolicy Delete).
func (userKind) cleanUp(ctx context.Context, p *sqlPass, u *databasev1.MySQLUser) error {
	if err := checkAccount(u.UserName()); err != nil {
		return nil // never created, never dropped
	}
	if err := p.db.DropUser(ctx, u.UserName(), u.UserHost()); err != nil {
		return err
	}
	p.r.eventf(u, vocabulary.EventCleanedUp, vocabulary.ActionDrop, "dropped account '%s'@'%s' on %s", u.UserName(), u.UserHost(), p.target.pod)
	return nil
}

// userDrift says how the server's account attributes differ from the
// spec's, "" when they do not.
func userDrift(spec dbop.UserSpec, info dbop.UserInfo) string {
	var diffs []string
	if info.MaxUserConnections != spec.MaxUserConnections {
		diffs = append(diffs, fmt.Sprintf("max user connections %d, not %d", spec.MaxUserConnections, info.MaxUserConnections))
	}
	if info.RequireSubject != spec.RequireSubject {
		diffs = append(diffs, fmt.Sprintf("require X.509 subject %q, not %q", spec.RequireSubject, info.RequireSubject))
	} else if spec.RequireSubject == "" && info.RequireSSL != spec.RequireSSL {
		diffs = append(diffs, fmt.Sprintf("require TLS %t, not %t", spec.RequireSSL, info.RequireSSL))
	}
	return strings.Join(diffs, ", ")
}

// passwordVersion returns the resourceVersion of u's password Secret, as
// the cache has it (keys only), and stalls when the Secret or its key is
// missing: creating it recovers the user through the Secret watch.
func (r *Reconciler) passwordVersion(ctx context.Context, u *databasev1.MySQLUser) (string, error) {
	ref := u.Spec.PasswordSecretRef
	s := &corev1.Secret{}
	switch err := r.Client.Get(ctx, client.ObjectKey{Namespace: u.Namespace, Name: ref.Name}, s); {
	case apierrors.IsNotFound(err):
		return "", outcome.Stalled(vocabulary.ReasonSecretNotFound, "passwordSecretRef: Secret %s not found in namespace %s", ref.Name, u.Namespace)
	case err != nil:
		return "", fmt.Errorf("get Secret %s: %w", ref.Name, err)
	}
	if _, ok := s.Data[u.PasswordKey()]; !ok {
		return "", outcome.Stalled(vocabulary.ReasonSecretInvalid, "passwordSecretRef: Secret %s has no key %q", ref.Name, u.PasswordKey())
	}
	return s.ResourceVersion, nil
}

// readPassword reads u's password from the API server, not the cache, and
// returns it with the Secret's resourceVersion. The password goes nowhere
// but to the server.
func (r *Reconciler) readPassword(ctx context.Context, u *databasev1.MySQLUser) (string, string, error) {
	ref := u.Spec.PasswordSecretRef
	s := &corev1.Secret{}
	switch err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: u.Namespace, Name: ref.Name}, s); {
	case apierrors.IsNotFound(err):
		return "", "", outcome.Stalled(vocabulary.ReasonSecretNotFound, "passwordSecretRef: Secret %s not found in namespace %s", ref.Name, u.Namespace)
	case err != nil:
		return "", "", fmt.Errorf("read Secret %s: %w", ref.Name, err)
	}
	pw, ok := s.Data[u.PasswordKey()]
	switch {
	case !ok:
		return "", "", outcome.Stalled(vocabulary.ReasonSecretInvalid, "passwordSecretRef: Secret %s has no key %q", ref.Name, u.PasswordKey())
	case len(pw) == 0:
		return "", "", outcome.Stalled(vocabulary.ReasonSecretInvalid, "passwordSecretRef: the key %q of Secret %s is empty", u.PasswordKey(), ref.Name)
	case !utf8.Valid(pw) || bytes.IndexByte(pw, 0) >= 0:
		return "", "", outcome.Stalled(vocabulary.ReasonSecretInvalid, "passwordSecretRef: the key %q of Secret %s is not UTF-8 text without NUL", u.PasswordKey(), ref.Name)
	}
	return string(pw), s.ResourceVersion, nil
}
