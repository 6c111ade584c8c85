package sqlobjects

import (
	"context"
	"fmt"
	"strings"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/controller/vocabulary"
	"github.com/example/mysql-operator/dbop"
)

// databaseKind is MySQLDatabase: a database created on the primary, its
// character set and collation put back when they drift, dropped on
// deletion only with deletionPolicy Delete.
type databaseKind struct{}

func (databaseKind) name() string                                      { return "mysqldatabase" }
func (databaseKind) newObject() *databasev1.MySQLDatabase              { return &databasev1.MySQLDatabase{} }
func (databaseKind) mysqlRef(d *databasev1.MySQLDatabase) string       { return d.Spec.MySQLRef.Name }
func (databaseKind) record(*databasev1.MySQLDatabase, *sqlObservation) {}

func (databaseKind) status(d *databasev1.MySQLDatabase) *databasev1.SQLObjectStatus { return &d.Status }

func (databaseKind) needsCleanup(d *databasev1.MySQLDatabase) bool {
	return d.Spec.DeletionPolicy == databasev1.DeletionDelete
}

// databaseSpec is the dbop spec of d.
func databaseSpec(d *databasev1.MySQLDatabase) dbop.DatabaseSpec {
	return dbop.DatabaseSpec{Name: d.DatabaseName(), CharacterSet: d.Spec.CharacterSet, Collation: d.Spec.Collation}
}

// apply creates the database when it is missing, and sets its character
// set and collation when the server reports others than the spec's.
func (databaseKind) apply(ctx context.Context, p *sqlPass, d *databasev1.MySQLDatabase, obs *sqlObservation) error {
	spec := databaseSpec(d)
	info, exists, err := p.db.Database(ctx, spec.Name)
	if err != nil {
		return err
	}
	switch {
	case !exists:
		if err := p.db.CreateDatabase(ctx, spec); err != nil {
			return refused(err)
		}
		p.changed(vocabulary.ActionCreate, "created database %q", spec.Name)
	case databaseDrift(spec, info) != "":
		if err := p.db.AlterDatabase(ctx, spec); err != nil {
			return refused(err)
		}
		p.changed(vocabulary.ActionAlter, "database %q: %s", spec.Name, databaseDrift(spec, info))
	}
	obs.ready = fmt.Sprintf("Database %q is on the primary %s", spec.Name, p.target.pod)
	return nil
}

// cleanUp drops the database, with its data (deletionPolicy Delete).
func (databaseKind) cleanUp(ctx context.Context, p *sqlPass, d *databasev1.MySQLDatabase) error {
	if err := p.db.DropDatabase(ctx, d.DatabaseName()); err != nil {
		return err
	}
	p.r.eventf(d, vocabulary.EventCleanedUp, vocabulary.ActionDrop, "dropped database %q on %s", d.DatabaseName(), p.target.pod)
	return nil
}

// databaseDrift says how the server's character set and collation differ
// from those the spec sets, "" when they do not. Unset fields are not
// compared; names compare as the server understands them.
func databaseDrift(spec dbop.DatabaseSpec, info dbop.DatabaseInfo) string {
	var diffs []string
	if spec.CharacterSet != "" && canonicalCharset(spec.CharacterSet) != canonicalCharset(info.CharacterSet) {
		diffs = append(diffs, fmt.Sprintf("character set %s, not %s", spec.CharacterSet, info.CharacterSet))
	}
	if spec.Collation != "" && canonicalCharset(spec.Collation) != canonicalCharset(info.Collation) {
		diffs = append(diffs, fmt.Sprintf("collation %s, not %s", spec.Collation, info.Collation))
	}
	return strings.Join(diffs, ", ")
}

// canonicalCharset lower-cases a character set or collation name and
// spells the utf8 alias as the servers report it (utf8mb3), so that a spec
// saying utf8 is not seen as drift for ever.
func canonicalCharset(s string) string {
	s = strings.ToLower(s)
	if s == "utf8" || strings.HasPrefix(s, "utf8_") {
		return "utf8mb3" + s[len("utf8"):]
	}
	return s
}
