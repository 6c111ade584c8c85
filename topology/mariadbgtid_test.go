package topology

import (
	"maps"
	"testing"
)

func TestParseMariaDBGTIDSet(t *testing.T) {
	cases := []struct{ in, want string }{
		{"", ""},
		{"\n", ""},
		{"0-1-100", "0-1-100"},
		{"0-1-100,1-2-5", "0-1-100,1-2-5"},
		// @@gtid_binlog_state as a 10.11 server printed it (latest GTID last).
		{"0-3-2,0-1-5,1-1-3", "0-1-5,0-3-2,1-1-3"},
		{" 0-1-5,\n0-1-3", "0-1-5"}, // same (domain, server): highest kept
		{"0-1-0", ""},               // sequence 0 is "nothing"
		{"4294967295-4294967295-18446744073709551615", "4294967295-4294967295-18446744073709551615"},
	}
	for _, c := range cases {
		got, err := ParseMariaDBGTIDSet(c.in)
		if err != nil {
			t.Errorf("ParseMariaDBGTIDSet(%q): %v", c.in, err)
			continue
		}
		if got.String() != c.want {
			t.Errorf("ParseMariaDBGTIDSet(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	for _, in := range []string{"0-1", "a-1-2", "0-1-2-3", "-1-1-1", "0-4294967296-1", "0-1-1,", "0-1-1,,0-2-2", "0-1-x"} {
		if got, err := ParseMariaDBGTIDSet(in); err == nil {
			t.Errorf("ParseMariaDBGTIDSet(%q) = %q, want an error", in, got)
		}
	}
}

func TestMariaDBGTIDSetAlgebra(t *testing.T) {
	cases := []struct {
		name           string
		a, b           string
		union, aMinusB string
		aContainsB     bool
	}{
		{"empty", "", "", "", "", true},
		{"replica behind", "0-1-10", "0-1-8", "0-1-10", "0-1-10", true},
		{"replica caught up", "0-1-10", "0-1-10", "0-1-10", "", true},
		// A write on replica 2 while the primary (1) is at 10.
		{"errant on replica", "0-1-10,0-2-11", "0-1-12", "0-1-12,0-2-11", "0-2-11", false},
		// The old primary 1 wrote 100, the new primary 2 only received 98.
		{"old primary ahead", "0-1-100", "0-1-98,0-2-150", "0-1-100,0-2-150", "0-1-100", false},
		{"domains", "0-1-5,1-1-3", "1-1-4", "0-1-5,1-1-4", "0-1-5", false},
		{"history of switchovers", "0-1-5,0-2-9,0-3-12", "0-1-5,0-2-9", "0-1-5,0-2-9,0-3-12", "0-3-12", true},
	}
	for _, c := range cases {
		a, b := MustParseMariaDBGTIDSet(c.a), MustParseMariaDBGTIDSet(c.b)
		if got := a.Union(b).String(); got != c.union {
			t.Errorf("%s: union = %q, want %q", c.name, got, c.union)
		}
		if got := a.Subtract(b).String(); got != c.aMinusB {
			t.Errorf("%s: a-b = %q, want %q", c.name, got, c.aMinusB)
		}
		if got := a.Contains(b); got != c.aContainsB {
			t.Errorf("%s: a contains b = %v, want %v", c.name, got, c.aContainsB)
		}
	}
}

func TestMariaDBGTIDSetPositionProgress(t *testing.T) {
	s := MustParseMariaDBGTIDSet("0-3-2,0-1-5,1-1-3,1-2-9")
	if got := s.Position().String(); got != "0-1-5,1-2-9" {
		t.Errorf("Position = %q", got)
	}
	if got, want := s.Progress(), map[uint32]uint64{0: 5, 1: 9}; !maps.Equal(got, want) {
		t.Errorf("Progress = %v, want %v", got, want)
	}
	if got := s.WithoutSource(1).String(); got != "0-3-2,1-2-9" {
		t.Errorf("WithoutSource(1) = %q", got)
	}
}

func TestMariaDBExecuted(t *testing.T) {
	// An instance seeded from a backup taken at 0-1-8 whose binlog state was
	// restored, after replicating two more transactions.
	got, err := MariaDBExecuted("0-2-3,0-1-10", "0-1-10")
	if err != nil || got.String() != "0-1-10,0-2-3" {
		t.Errorf("MariaDBExecuted = %q, %v", got, err)
	}
	// Seeded without binlog state: only gtid_slave_pos knows the history.
	got, err = MariaDBExecuted("", "0-1-8")
	if err != nil || got.String() != "0-1-8" {
		t.Errorf("MariaDBExecuted = %q, %v", got, err)
	}
	if _, err := MariaDBExecuted("x", ""); err == nil {
		t.Error("MariaDBExecuted(x) succeeded")
	}
	if _, err := MariaDBExecuted("", "0-1"); err == nil {
		t.Error("MariaDBExecuted(slave 0-1) succeeded")
	}
}

func TestGTIDSetFlavors(t *testing.T) {
	my := MustParseGTIDSet(FlavorMySQL, uA+":1-5")
	ma := MustParseGTIDSet(FlavorMariaDB, "0-1-5,0-2-3")
	var zero GTIDSet
	if !my.Contains(zero) || zero.Contains(my) || !zero.IsEmpty() {
		t.Error("zero value is not an empty set of any flavor")
	}
	if got := zero.Union(ma).String(); got != "0-1-5,0-2-3" {
		t.Errorf("zero ∪ MariaDB = %q", got)
	}
	if got := ma.WaitTarget(); got != "0-1-5" {
		t.Errorf("MariaDB WaitTarget = %q", got)
	}
	if got := my.WaitTarget(); got != uA+":1-5" {
		t.Errorf("MySQL WaitTarget = %q", got)
	}
	if got := ma.WithoutSource("2").String(); got != "0-1-5" {
		t.Errorf("WithoutSource(2) = %q", got)
	}
	if _, err := ParseGTIDSet(0, ""); err == nil {
		t.Error("ParseGTIDSet(flavor 0) succeeded")
	}
	defer func() {
		if recover() == nil {
			t.Error("mixing flavors did not panic")
		}
	}()
	_ = my.Union(ma)
}
