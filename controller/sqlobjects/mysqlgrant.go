package sqlobjects

import (
	"context"
	"fmt"
	"slices"
	"strings"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/controller/vocabulary"
	"github.com/example/mysql-operator/dbop"
)

// grantKind is MySQLGrant: privileges of one account on one level (a
// database, a table, every database), compared with SHOW GRANTS on every
// reconcile. What the spec lists and the server lacks is granted; what the
// server shows on that level and the spec does not list is revoked: what
// to revoke comes from the server, never from a remembered status.
type grantKind struct{}

func (grantKind) name() string                                   { return "mysqlgrant" }
func (grantKind) newObject() *databasev1.MySQLGrant              { return &databasev1.MySQLGrant{} }
func (grantKind) mysqlRef(g *databasev1.MySQLGrant) string       { return g.Spec.MySQLRef.Name }
func (grantKind) needsCleanup(*databasev1.MySQLGrant) bool       { return true }
func (grantKind) record(*databasev1.MySQLGrant, *sqlObservation) {}

func (grantKind) status(g *databasev1.MySQLGrant) *databasev1.SQLObjectStatus { return &g.Status }

// desiredGrant is the dbop grant g asks for, privileges sorted.
func desiredGrant(g *databasev1.MySQLGrant) dbop.Grant {
	privs := make([]string, 0, len(g.Spec.Privileges))
	for _, p := range g.Spec.Privileges {
		if !slices.Contains(privs, string(p)) {
			privs = append(privs, string(p))
		}
	}
	slices.Sort(privs)
	return dbop.Grant{Database: g.Spec.Database, Table: g.GrantTable(), Privileges: privs, GrantOption: g.Spec.GrantOption}
}

// apply waits for the account, reads its privileges on the grant's level
// and revokes, then grants, the difference.
func (grantKind) apply(ctx context.Context, p *sqlPass, g *databasev1.MySQLGrant, obs *sqlObservation) error {
	want := desiredGrant(g)
	if err := checkAccount(g.Spec.User); err != nil {
		return err
	}
	if err := p.db.CheckPrivileges(ctx, want.Privileges); err != nil {
		return refused(err)
	}
	have, exists, err := serverGrant(ctx, p.db, g)
	if err != nil {
		return err
	}
	account := fmt.Sprintf("'%s'@'%s'", g.Spec.User, g.GrantHost())
	if !exists {
		return waiting(vocabulary.ReasonUserNotFound, sqlWaitRetry, "account %s does not exist on the primary %s yet", account, p.target.pod)
	}
	revoke, grant := grantDiff(have, want)
	if revoke != nil {
		if err := p.db.RevokePrivileges(ctx, g.Spec.User, g.GrantHost(), *revoke); err != nil {
			return refused(err)
		}
		p.changed(vocabulary.ActionRevoke, "revoked %s on %s from %s", privilegeList(*revoke), grantLevel(want), account)
	}
	if grant != nil {
		if err := p.db.GrantPrivileges(ctx, g.Spec.User, g.GrantHost(), *grant); err != nil {
			return refused(err)
		}
		p.changed(vocabulary.ActionGrant, "granted %s on %s to %s", privilegeList(*grant), grantLevel(want), account)
	}
	obs.ready = fmt.Sprintf("%s on %s granted to %s on the primary %s", privilegeList(want), grantLevel(want), account, p.target.pod)
	return nil
}

// cleanUp revokes every privilege the server shows for the account on the
// grant's level, and the grant option.
func (grantKind) cleanUp(ctx context.Context, p *sqlPass, g *databasev1.MySQLGrant) error {
	if checkAccount(g.Spec.User) != nil {
		return nil // never granted, never revoked
	}
	have, exists, err := serverGrant(ctx, p.db, g)
	if err != nil || !exists || (len(have.Privileges) == 0 && !have.GrantOption) {
		return err
	}
	if err := p.db.RevokePrivileges(ctx, g.Spec.User, g.GrantHost(), have); err != nil {
		return err
	}
	p.r.eventf(g, vocabulary.EventCleanedUp, vocabulary.ActionRevoke, "revoked %s on %s from '%s'@'%s' on %s", privilegeList(have), grantLevel(have),
		g.Spec.User, g.GrantHost(), p.target.pod)
	return nil
}

// serverGrant returns what SHOW GRANTS says the account holds on g's
// level (empty when nothing); exists is false when the account does not
// exist.
func serverGrant(ctx context.Context, db *dbop.Instance, g *databasev1.MySQLGrant) (have dbop.Grant, exists bool, err error) {
	have = dbop.Grant{Database: g.Spec.Database, Table: g.GrantTable()}
	if _, exists, err = db.User(ctx, g.Spec.User, g.GrantHost()); err != nil || !exists {
		return have, exists, err
	}
	all, err := db.Grants(ctx, g.Spec.User, g.GrantHost())
	if err != nil {
		return have, true, err
	}
	for _, s := range all {
		if s.Database == have.Database && s.Table == have.Table {
			return s, true, nil
		}
	}
	return have, true, nil
}

// grantDiff returns what to revoke and what to grant so that the server
// holds want where it holds have; nil when nothing. Revokes go first: a
// REVOKE ALL PRIVILEGES after a GRANT would take the new privileges too.
// ALL PRIVILEGES wanted covers whatever is held. A grant lists every
// wanted privilege, which GRANT accepts again.
func grantDiff(have, want dbop.Grant) (revoke, grant *dbop.Grant) {
	var extra, missing []string
	for _, p := range have.Privileges {
		if !slices.Contains(want.Privileges, p) && !slices.Contains(want.Privileges, "ALL PRIVILEGES") {
			extra = append(extra, p)
		}
	}
	for _, p := range want.Privileges {
		if !slices.Contains(have.Privileges, p) {
			missing = append(missing, p)
		}
	}
	if len(extra) > 0 || (have.GrantOption && !want.GrantOption) {
		revoke = &dbop.Grant{Database: want.Database, Table: want.Table, Privileges: extra, GrantOption: have.GrantOption && !want.GrantOption}
	}
	if len(missing) > 0 || (want.GrantOption && !have.GrantOption) {
		grant = &want
	}
	return revoke, grant
}

// privilegeList renders a grant's privileges for messages:
// "SELECT, INSERT", with "GRANT OPTION" when it has the option.
func privilegeList(g dbop.Grant) string {
	ps := slices.Clone(g.Privileges)
	if g.GrantOption {
		ps = append(ps, "GRANT OPTION")
	}
	return strings.Join(ps, ", ")
}

// grantLevel renders a grant's level for messages: db.*, db.table or *.*.
func grantLevel(g dbop.Grant) string { return g.Database + "." + g.Table }
