package topology

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// maxTransactionNumber is the largest GNO MySQL accepts (2^63-1).
const maxTransactionNumber = math.MaxInt64

// mysqlSource identifies the origin of MySQL GTIDs: the server UUID, in canonical
// lower-case form, and the tag ("" for untagged GTIDs, MySQL 8.3 and later).
type mysqlSource struct {
	uuid string
	tag  string
}

// MySQLGTIDSet is a MySQL GTID set such as
// "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5:7-9,uuid2:1-3". The zero value is the
// empty set. Values are immutable: every operation returns a new set.
type MySQLGTIDSet struct {
	m map[mysqlSource][]Interval
}

// ParseMySQLGTIDSet parses a GTID set as MySQL prints it (gtid_executed,
// Retrieved_Gtid_Set), tolerating whitespace and newlines between elements and
// upper-case UUIDs. Tagged GTIDs ("uuid:tag:1-5") are accepted. The empty string is
// the empty set.
func ParseMySQLGTIDSet(s string) (MySQLGTIDSet, error) {
	s = strings.Join(strings.Fields(s), "")
	set := MySQLGTIDSet{m: map[mysqlSource][]Interval{}}
	if s == "" {
		return set, nil
	}
	for elem := range strings.SplitSeq(s, ",") {
		if err := set.parseElement(elem); err != nil {
			return MySQLGTIDSet{}, fmt.Errorf("parse GTID set: %w", err)
		}
	}
	for k, ivs := range set.m {
		set.m[k] = normalize(ivs)
	}
	return set, nil
}

// parseElement parses "uuid:iv[:iv...][:tag:iv[:iv...]...]" into set.
func (set MySQLGTIDSet) parseElement(elem string) error {
	parts := strings.Split(elem, ":")
	uuid, err := canonicalUUID(parts[0])
	if err != nil {
		return err
	}
	if len(parts) < 2 {
		return fmt.Errorf("%q has no interval", elem)
	}
	src := mysqlSource{uuid: uuid}
	pending := false // a tag was read and no interval followed yet
	for _, p := range parts[1:] {
		if p != "" && p[0] >= '0' && p[0] <= '9' {
			iv, err := parseInterval(p)
			if err != nil {
				return err
			}
			set.m[src] = append(set.m[src], iv)
			pending = false
			continue
		}
		if pending {
			return fmt.Errorf("tag %q has no interval", src.tag)
		}
		if src.tag, err = parseTag(p); err != nil {
			return err
		}
		pending = true
	}
	if pending {
		return fmt.Errorf("tag %q has no interval", src.tag)
	}
	return nil
}

// canonicalUUID validates a UUID (with or without dashes) and returns it in
// lower-case 8-4-4-4-12 form.
func canonicalUUID(s string) (string, error) {
	hex := strings.ToLower(strings.ReplaceAll(s, "-", ""))
	if len(hex) != 32 || (len(s) != 32 && len(s) != 36) {
		return "", fmt.Errorf("invalid UUID %q", s)
	}
	if len(s) == 36 && (s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-') {
		return "", fmt.Errorf("invalid UUID %q", s)
	}
	for _, c := range hex {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return "", fmt.Errorf("invalid UUID %q", s)
		}
	}
	return hex[0:8] + "-" + hex[8:12] + "-" + hex[12:16] + "-" + hex[16:20] + "-" + hex[20:], nil
}

// parseTag validates a GTID tag: a letter or underscore, then up to 31 letters,
// digits or underscores. Tags are case-insensitive; the canonical form is lower case.
func parseTag(s string) (string, error) {
	t := strings.ToLower(s)
	if t == "" || len(t) > 32 {
		return "", fmt.Errorf("invalid GTID tag %q", s)
	}
	for i, c := range t {
		ok := c == '_' || (c >= 'a' && c <= 'z') || (i > 0 && c >= '0' && c <= '9')
		if !ok {
			return "", fmt.Errorf("invalid GTID tag %q", s)
		}
	}
	return t, nil
}

// parseInterval parses "n" or "n-m" with 1 <= n <= m <= 2^63-1.
func parseInterval(s string) (Interval, error) {
	lo, hi, isRange := strings.Cut(s, "-")
	start, err := strconv.ParseUint(lo, 10, 64)
	if err != nil || start < 1 || start > maxTransactionNumber {
		return Interval{}, fmt.Errorf("invalid interval %q", s)
	}
	end := start
	if isRange {
		end, err = strconv.ParseUint(hi, 10, 64)
		if err != nil || end < start || end > maxTransactionNumber {
			return Interval{}, fmt.Errorf("invalid interval %q", s)
		}
	}
	return Interval{Start: start, End: end}, nil
}

// MustParseMySQLGTIDSet is ParseMySQLGTIDSet for constants in tests; it panics on
// a malformed set.
func MustParseMySQLGTIDSet(s string) MySQLGTIDSet {
	set, err := ParseMySQLGTIDSet(s)
	if err != nil {
		panic(err)
	}
	return set
}

// sortedSources returns the set's sources ordered by UUID, then tag.
func (s MySQLGTIDSet) sortedSources() []mysqlSource {
	keys := make([]mysqlSource, 0, len(s.m))
	for k, ivs := range s.m {
		if len(ivs) > 0 {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b mysqlSource) int {
		if c := strings.Compare(a.uuid, b.uuid); c != 0 {
			return c
		}
		return strings.Compare(a.tag, b.tag)
	})
	return keys
}

// String returns the canonical form: sources sorted by UUID, lower case, intervals
// merged, elements separated by "," with no whitespace. The empty set is "".
func (s MySQLGTIDSet) String() string {
	var b strings.Builder
	prevUUID := ""
	for _, k := range s.sortedSources() {
		if k.uuid != prevUUID {
			if prevUUID != "" {
				b.WriteByte(',')
			}
			b.WriteString(k.uuid)
			prevUUID = k.uuid
		}
		if k.tag != "" {
			b.WriteString(":" + k.tag)
		}
		for _, iv := range s.m[k] {
			b.WriteString(":" + iv.String())
		}
	}
	return b.String()
}

// IsEmpty reports whether the set holds no GTID.
func (s MySQLGTIDSet) IsEmpty() bool {
	return len(s.sortedSources()) == 0
}

// Count returns the number of transactions in the set.
func (s MySQLGTIDSet) Count() uint64 {
	var n uint64
	for _, ivs := range s.m {
		n += countIntervals(ivs)
	}
	return n
}

// Union returns the GTIDs in s or in o.
func (s MySQLGTIDSet) Union(o MySQLGTIDSet) MySQLGTIDSet {
	out := MySQLGTIDSet{m: map[mysqlSource][]Interval{}}
	for k, ivs := range s.m {
		out.m[k] = slices.Clone(ivs)
	}
	for k, ivs := range o.m {
		out.m[k] = normalize(append(out.m[k], ivs...))
	}
	return out
}

// Subtract returns the GTIDs in s that are not in o (MySQL's GTID_SUBTRACT).
func (s MySQLGTIDSet) Subtract(o MySQLGTIDSet) MySQLGTIDSet {
	out := MySQLGTIDSet{m: map[mysqlSource][]Interval{}}
	for k, ivs := range s.m {
		if rest := subtractIntervals(ivs, o.m[k]); len(rest) > 0 {
			out.m[k] = rest
		}
	}
	return out
}

// Contains reports whether every GTID of o is in s (GTID_SUBSET(o, s)).
func (s MySQLGTIDSet) Contains(o MySQLGTIDSet) bool {
	return o.Subtract(s).IsEmpty()
}

// WithoutSource returns s without the GTIDs originated by the server whose
// server_uuid is uuid (tagged or not).
func (s MySQLGTIDSet) WithoutSource(uuid string) MySQLGTIDSet {
	canon, err := canonicalUUID(uuid)
	out := MySQLGTIDSet{m: map[mysqlSource][]Interval{}}
	for k, ivs := range s.m {
		if err == nil && k.uuid == canon {
			continue
		}
		out.m[k] = ivs
	}
	return out
}
