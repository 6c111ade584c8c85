package topology

import "testing"

const (
	uA = "3e11fa47-71ca-11e1-9e33-c80aa9429562"
	uB = "8a94f357-aab4-11df-86ab-c80aa9429563"
	// uAUpper is uA as some servers and humans print it.
	uAUpper = "3E11FA47-71CA-11E1-9E33-C80AA9429562"
)

func TestParseMySQLGTIDSet(t *testing.T) {
	cases := []struct {
		in, want string
	}{
		{"", ""},
		{" \n\t", ""},
		{uA + ":1-5:7-9", uA + ":1-5:7-9"},
		{uAUpper + ":1-5", uA + ":1-5"},
		{uA + ":1-5:6-9", uA + ":1-9"},                 // adjacent merge
		{uA + ":1-5:3-8", uA + ":1-8"},                 // overlap
		{uA + ":7," + uA + ":1-3", uA + ":1-3:7"},      // same source twice, unordered
		{uAUpper + ":1-3," + uA + ":4-5", uA + ":1-5"}, // different case, same UUID
		{uB + ":1-3,\n" + uA + ":1-5", uA + ":1-5," + uB + ":1-3"},
		{"3e11fa4771ca11e19e33c80aa9429562:4", uA + ":4"}, // without dashes
		{uA + ":5:5:5", uA + ":5"},
		{uA + ":1-3:Tag_1:5:6", uA + ":1-3:tag_1:5-6"},
		{uA + ":t:2," + uA + ":1", uA + ":1:t:2"},
		{uA + ":1-9223372036854775807", uA + ":1-9223372036854775807"},
		// gtid_executed as MySQL prints it: ",\n" between sources.
		{uA + ":1-100,\n" + uB + ":1-20:22", uA + ":1-100," + uB + ":1-20:22"},
	}
	for _, c := range cases {
		got, err := ParseMySQLGTIDSet(c.in)
		if err != nil {
			t.Errorf("ParseMySQLGTIDSet(%q): %v", c.in, err)
			continue
		}
		if got.String() != c.want {
			t.Errorf("ParseMySQLGTIDSet(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestParseMySQLGTIDSetErrors(t *testing.T) {
	for _, in := range []string{
		uA, uA + ":", uA + ":0", uA + ":5-3", uA + ":1-", uA + ":-1", uA + ":a-b",
		"not-a-uuid:1", uA[:35] + ":1", uA + "0:1", uA + ":1,," + uB + ":2", "," + uA + ":1",
		uA + ":tag", uA + ":t1:t2:1", uA + ":1-9223372036854775808", uA + ":1x",
		uA + ":" + "t234567890123456789012345678901234:1", "3e11fa47+71ca-11e1-9e33-c80aa9429562:1",
		"zz11fa47-71ca-11e1-9e33-c80aa9429562:1",
	} {
		if got, err := ParseMySQLGTIDSet(in); err == nil {
			t.Errorf("ParseMySQLGTIDSet(%q) = %q, want an error", in, got)
		}
	}
}

func TestMySQLGTIDSetAlgebra(t *testing.T) {
	cases := []struct {
		a, b                string
		union, aMinusB      string
		aContainsB, isEmpty bool
	}{
		{"", "", "", "", true, true},
		{uA + ":1-10", "", uA + ":1-10", uA + ":1-10", true, false},
		{"", uA + ":1-10", uA + ":1-10", "", false, true},
		{uA + ":1-10", uA + ":3-4", uA + ":1-10", uA + ":1-2:5-10", true, false},
		{uA + ":1-10", uA + ":1-10", uA + ":1-10", "", true, false},
		{uA + ":1-5", uA + ":6-9", uA + ":1-9", uA + ":1-5", false, false},
		{uA + ":1-5", uA + ":4-9", uA + ":1-9", uA + ":1-3", false, false},
		{uA + ":1-3:7-9", uA + ":2-8", uA + ":1-9", uA + ":1:9", false, false},
		{uA + ":1-100", uA + ":1:3:5-6:100", uA + ":1-100", uA + ":2:4:7-99", true, false},
		{uA + ":1-5," + uB + ":1-3", uAUpper + ":1-5", uA + ":1-5," + uB + ":1-3", uB + ":1-3", true, false},
		{uA + ":1-5", uA + ":1-5," + uB + ":1", uA + ":1-5," + uB + ":1", "", false, false},
		{uA + ":1-5:t:1-2", uA + ":1-5", uA + ":1-5:t:1-2", uA + ":t:1-2", true, false},
	}
	for _, c := range cases {
		a, b := MustParseMySQLGTIDSet(c.a), MustParseMySQLGTIDSet(c.b)
		if got := a.Union(b).String(); got != c.union {
			t.Errorf("%q ∪ %q = %q, want %q", c.a, c.b, got, c.union)
		}
		if got := b.Union(a).String(); got != c.union {
			t.Errorf("%q ∪ %q = %q, want %q (commutative)", c.b, c.a, got, c.union)
		}
		if got := a.Subtract(b).String(); got != c.aMinusB {
			t.Errorf("%q - %q = %q, want %q", c.a, c.b, got, c.aMinusB)
		}
		if got := a.Contains(b); got != c.aContainsB {
			t.Errorf("%q contains %q = %v, want %v", c.a, c.b, got, c.aContainsB)
		}
		if got := a.IsEmpty(); got != c.isEmpty {
			t.Errorf("%q IsEmpty = %v, want %v", c.a, got, c.isEmpty)
		}
	}
}

func TestMySQLGTIDSetCountAndWithoutSource(t *testing.T) {
	s := MustParseMySQLGTIDSet(uA + ":1-10:20:t:1-2," + uB + ":1-3")
	if got := s.Count(); got != 16 {
		t.Errorf("Count = %d, want 16", got)
	}
	if got := s.WithoutSource(uAUpper).String(); got != uB+":1-3" {
		t.Errorf("WithoutSource(A) = %q", got)
	}
	if got := s.WithoutSource("garbage").String(); got != s.String() {
		t.Errorf("WithoutSource(garbage) = %q, want unchanged", got)
	}
	// Operations do not modify their operands.
	before := s.String()
	_ = s.Union(MustParseMySQLGTIDSet(uA + ":11-19"))
	_ = s.Subtract(MustParseMySQLGTIDSet(uA + ":1-5"))
	if s.String() != before {
		t.Errorf("operand modified: %q, want %q", s, before)
	}
}
