package topology

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// MariaDBGTID is one MariaDB GTID: replication domain, originating server_id and
// sequence number, printed "domain-server-seq".
type MariaDBGTID struct {
	// Domain is the replication domain (gtid_domain_id).
	Domain uint32
	// Server is the server_id of the server that originated the transaction.
	Server uint32
	// Seq is the sequence number within the domain.
	Seq uint64
}

// String formats the GTID as "domain-server-seq".
func (g MariaDBGTID) String() string {
	return fmt.Sprintf("%d-%d-%d", g.Domain, g.Server, g.Seq)
}

// mariaKey is a (domain, server_id) pair.
type mariaKey struct {
	domain, server uint32
}

// MariaDBGTIDSet is the highest sequence number per (domain, server_id), the model
// described in the package documentation. It is parsed from @@gtid_binlog_state,
// @@gtid_slave_pos, @@gtid_current_pos, Gtid_IO_Pos or a backup's binlog info.
// The zero value is the empty set. Values are immutable.
type MariaDBGTIDSet struct {
	m map[mariaKey]uint64
}

// ParseMariaDBGTIDSet parses a comma-separated list of "domain-server-seq" GTIDs,
// tolerating whitespace and newlines. When a (domain, server) pair appears more than
// once, the highest sequence number is kept. The empty string is the empty set.
func ParseMariaDBGTIDSet(s string) (MariaDBGTIDSet, error) {
	s = strings.Join(strings.Fields(s), "")
	set := MariaDBGTIDSet{m: map[mariaKey]uint64{}}
	if s == "" {
		return set, nil
	}
	for elem := range strings.SplitSeq(s, ",") {
		g, err := parseMariaDBGTID(elem)
		if err != nil {
			return MariaDBGTIDSet{}, fmt.Errorf("parse GTID list: %w", err)
		}
		k := mariaKey{g.Domain, g.Server}
		set.m[k] = max(set.m[k], g.Seq)
	}
	return set, nil
}

// parseMariaDBGTID parses one "domain-server-seq" triple.
func parseMariaDBGTID(s string) (MariaDBGTID, error) {
	parts := strings.Split(s, "-")
	if len(parts) != 3 {
		return MariaDBGTID{}, fmt.Errorf("invalid GTID %q", s)
	}
	d, err1 := strconv.ParseUint(parts[0], 10, 32)
	srv, err2 := strconv.ParseUint(parts[1], 10, 32)
	seq, err3 := strconv.ParseUint(parts[2], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return MariaDBGTID{}, fmt.Errorf("invalid GTID %q", s)
	}
	return MariaDBGTID{Domain: uint32(d), Server: uint32(srv), Seq: seq}, nil
}

// MustParseMariaDBGTIDSet is ParseMariaDBGTIDSet for constants in tests; it panics
// on a malformed list.
func MustParseMariaDBGTIDSet(s string) MariaDBGTIDSet {
	set, err := ParseMariaDBGTIDSet(s)
	if err != nil {
		panic(err)
	}
	return set
}

// GTIDs returns the entries ordered by domain, then server_id. Entries with
// sequence number 0 (MariaDB's "nothing yet") are left out.
func (s MariaDBGTIDSet) GTIDs() []MariaDBGTID {
	out := make([]MariaDBGTID, 0, len(s.m))
	for k, seq := range s.m {
		if seq > 0 {
			out = append(out, MariaDBGTID{Domain: k.domain, Server: k.server, Seq: seq})
		}
	}
	slices.SortFunc(out, func(a, b MariaDBGTID) int {
		if a.Domain != b.Domain {
			return cmpUint(uint64(a.Domain), uint64(b.Domain))
		}
		return cmpUint(uint64(a.Server), uint64(b.Server))
	})
	return out
}

// cmpUint compares two unsigned integers like cmp.Compare.
func cmpUint(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// String returns the canonical form "d-s-n,..." ordered by domain then server_id;
// the empty set is "".
func (s MariaDBGTIDSet) String() string {
	gtids := s.GTIDs()
	parts := make([]string, len(gtids))
	for i, g := range gtids {
		parts[i] = g.String()
	}
	return strings.Join(parts, ",")
}

// IsEmpty reports whether the set holds no GTID.
func (s MariaDBGTIDSet) IsEmpty() bool {
	return len(s.GTIDs()) == 0
}

// Union returns, per (domain, server), the higher sequence number of s and o.
func (s MariaDBGTIDSet) Union(o MariaDBGTIDSet) MariaDBGTIDSet {
	out := MariaDBGTIDSet{m: make(map[mariaKey]uint64, len(s.m)+len(o.m))}
	for k, v := range s.m {
		out.m[k] = v
	}
	for k, v := range o.m {
		out.m[k] = max(out.m[k], v)
	}
	return out
}

// Subtract returns the entries of s that o does not contain: (d, srv, n) where o's
// sequence number for (d, srv) is lower than n or absent. A non-empty result means s
// has transactions o never had.
func (s MariaDBGTIDSet) Subtract(o MariaDBGTIDSet) MariaDBGTIDSet {
	out := MariaDBGTIDSet{m: map[mariaKey]uint64{}}
	for k, v := range s.m {
		if v > o.m[k] {
			out.m[k] = v
		}
	}
	return out
}

// Contains reports whether s has every transaction of o.
func (s MariaDBGTIDSet) Contains(o MariaDBGTIDSet) bool {
	return o.Subtract(s).IsEmpty()
}

// WithoutSource returns s without the entries originated by serverID.
func (s MariaDBGTIDSet) WithoutSource(serverID uint32) MariaDBGTIDSet {
	out := MariaDBGTIDSet{m: map[mariaKey]uint64{}}
	for k, v := range s.m {
		if k.server != serverID {
			out.m[k] = v
		}
	}
	return out
}

// Position returns the GTID with the highest sequence number of each domain, the
// form MASTER_GTID_WAIT and gtid_slave_pos take (like @@gtid_binlog_pos).
func (s MariaDBGTIDSet) Position() MariaDBGTIDSet {
	best := map[uint32]MariaDBGTID{}
	for _, g := range s.GTIDs() {
		if g.Seq > best[g.Domain].Seq {
			best[g.Domain] = g
		}
	}
	out := MariaDBGTIDSet{m: map[mariaKey]uint64{}}
	for _, g := range best {
		out.m[mariaKey{g.Domain, g.Server}] = g.Seq
	}
	return out
}

// Progress returns, per domain, the highest sequence number in s. Under
// gtid_strict_mode it measures how far an instance went in each domain.
func (s MariaDBGTIDSet) Progress() map[uint32]uint64 {
	out := map[uint32]uint64{}
	for k, v := range s.m {
		out[k.domain] = max(out[k.domain], v)
	}
	return out
}

// MariaDBExecuted returns the transactions a MariaDB instance has executed:
// @@gtid_binlog_state (every transaction written to its binary log, its own and,
// with log_slave_updates, the replicated ones) united with @@gtid_slave_pos (the
// last replicated position, which is all an instance restored from a backup knows of
// the history before the backup).
func MariaDBExecuted(binlogState, slavePos string) (MariaDBGTIDSet, error) {
	a, err := ParseMariaDBGTIDSet(binlogState)
	if err != nil {
		return MariaDBGTIDSet{}, fmt.Errorf("gtid_binlog_state: %w", err)
	}
	b, err := ParseMariaDBGTIDSet(slavePos)
	if err != nil {
		return MariaDBGTIDSet{}, fmt.Errorf("gtid_slave_pos: %w", err)
	}
	return a.Union(b), nil
}
