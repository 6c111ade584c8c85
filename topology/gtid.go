package topology

import (
	"fmt"
	"strconv"
)

// Flavor selects the GTID format and rules: MySQL sets or MariaDB positions.
type Flavor int

const (
	// FlavorMySQL is MySQL's UUID:interval GTID sets.
	FlavorMySQL Flavor = iota + 1
	// FlavorMariaDB is MariaDB's domain-server-seq GTIDs.
	FlavorMariaDB
)

// String names the flavor.
func (f Flavor) String() string {
	switch f {
	case FlavorMySQL:
		return "MySQL"
	case FlavorMariaDB:
		return "MariaDB"
	}
	return "Flavor(" + strconv.Itoa(int(f)) + ")"
}

// GTIDSet is a GTID set of either flavor, so that decisions are written once. The
// zero value is an empty set of no flavor, which combines with sets of any flavor.
// Combining non-empty sets of different flavors panics: Decide checks flavors first.
type GTIDSet struct {
	flavor Flavor
	mysql  MySQLGTIDSet
	maria  MariaDBGTIDSet
}

// ParseGTIDSet parses s in the given flavor's format.
func ParseGTIDSet(f Flavor, s string) (GTIDSet, error) {
	switch f {
	case FlavorMySQL:
		set, err := ParseMySQLGTIDSet(s)
		return GTIDSet{flavor: f, mysql: set}, err
	case FlavorMariaDB:
		set, err := ParseMariaDBGTIDSet(s)
		return GTIDSet{flavor: f, maria: set}, err
	}
	return GTIDSet{}, fmt.Errorf("unknown GTID flavor %d", int(f))
}

// MustParseGTIDSet is ParseGTIDSet for constants in tests; it panics on error.
func MustParseGTIDSet(f Flavor, s string) GTIDSet {
	set, err := ParseGTIDSet(f, s)
	if err != nil {
		panic(err)
	}
	return set
}

// FromMySQL wraps a MySQL GTID set.
func FromMySQL(s MySQLGTIDSet) GTIDSet { return GTIDSet{flavor: FlavorMySQL, mysql: s} }

// FromMariaDB wraps a MariaDB GTID set.
func FromMariaDB(s MariaDBGTIDSet) GTIDSet { return GTIDSet{flavor: FlavorMariaDB, maria: s} }

// Flavor returns the set's flavor, 0 for the zero value.
func (g GTIDSet) Flavor() Flavor { return g.flavor }

// IsEmpty reports whether the set holds no GTID.
func (g GTIDSet) IsEmpty() bool {
	switch g.flavor {
	case FlavorMySQL:
		return g.mysql.IsEmpty()
	case FlavorMariaDB:
		return g.maria.IsEmpty()
	}
	return true
}

// String returns the canonical text of the set.
func (g GTIDSet) String() string {
	switch g.flavor {
	case FlavorMySQL:
		return g.mysql.String()
	case FlavorMariaDB:
		return g.maria.String()
	}
	return ""
}

// pair returns the common flavor of g and o; an empty zero value adopts the other's.
func (g GTIDSet) pair(o GTIDSet) Flavor {
	switch {
	case g.flavor == o.flavor:
		return g.flavor
	case g.flavor == 0:
		return o.flavor
	case o.flavor == 0:
		return g.flavor
	}
	panic(fmt.Sprintf("topology: mixing %s and %s GTID sets", g.flavor, o.flavor))
}

// Union returns the GTIDs in g or o.
func (g GTIDSet) Union(o GTIDSet) GTIDSet {
	switch g.pair(o) {
	case FlavorMySQL:
		return FromMySQL(g.mysql.Union(o.mysql))
	case FlavorMariaDB:
		return FromMariaDB(g.maria.Union(o.maria))
	}
	return GTIDSet{}
}

// Subtract returns the GTIDs of g that o does not have.
func (g GTIDSet) Subtract(o GTIDSet) GTIDSet {
	switch g.pair(o) {
	case FlavorMySQL:
		return FromMySQL(g.mysql.Subtract(o.mysql))
	case FlavorMariaDB:
		return FromMariaDB(g.maria.Subtract(o.maria))
	}
	return GTIDSet{}
}

// Contains reports whether g has every GTID of o.
func (g GTIDSet) Contains(o GTIDSet) bool {
	return o.Subtract(g).IsEmpty()
}

// WithoutSource returns g without the GTIDs originated by the server identified by
// sourceID: its server_uuid on MySQL, its server_id in decimal on MariaDB.
func (g GTIDSet) WithoutSource(sourceID string) GTIDSet {
	switch g.flavor {
	case FlavorMySQL:
		return FromMySQL(g.mysql.WithoutSource(sourceID))
	case FlavorMariaDB:
		id, err := strconv.ParseUint(sourceID, 10, 32)
		if err != nil {
			return g
		}
		return FromMariaDB(g.maria.WithoutSource(uint32(id)))
	}
	return g
}

// WaitTarget returns the text to wait for on another instance until it has every
// transaction of g: the set itself for MySQL's WAIT_FOR_EXECUTED_GTID_SET, the
// per-domain position for MariaDB's MASTER_GTID_WAIT.
func (g GTIDSet) WaitTarget() string {
	if g.flavor == FlavorMariaDB {
		return g.maria.Position().String()
	}
	return g.String()
}

// MySQL returns the MySQL set (empty for another flavor).
func (g GTIDSet) MySQL() MySQLGTIDSet { return g.mysql }

// MariaDB returns the MariaDB set (empty for another flavor).
func (g GTIDSet) MariaDB() MariaDBGTIDSet { return g.maria }
