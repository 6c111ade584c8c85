package topology

import (
	"math/rand/v2"
	"testing"
)

// TestIntervalAlgebraAgainstBitmaps checks Union, Subtract and Contains on random
// sets of transaction numbers 1..63 against the same operations on bit masks.
func TestIntervalAlgebraAgainstBitmaps(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		ma, mb := r.Uint64()&^1, r.Uint64()&^1
		a, b := FromMySQL(maskSet(ma)), FromMySQL(maskSet(mb))
		check := func(op string, got GTIDSet, want uint64) {
			t.Helper()
			if g := maskSet(want).String(); got.String() != g {
				t.Fatalf("%s: %q vs %q: got %q, want %q", op, a, b, got, g)
			}
		}
		check("union", a.Union(b), ma|mb)
		check("subtract", a.Subtract(b), ma&^mb)
		if got, want := a.Contains(b), mb&^ma == 0; got != want {
			t.Fatalf("%q contains %q = %v, want %v", a, b, got, want)
		}
		if got := a.MySQL().Count(); got != uint64(popcount(ma)) {
			t.Fatalf("count %q = %d", a, got)
		}
	}
}

// maskSet builds a set of uA holding the numbers whose bit is set in m (bit n is
// transaction n, n >= 1), written as single-number intervals to exercise merging.
func maskSet(m uint64) MySQLGTIDSet {
	s := MySQLGTIDSet{m: map[mysqlSource][]Interval{}}
	k := mysqlSource{uuid: uA}
	for n := uint64(1); n < 64; n++ {
		if m&(1<<n) != 0 {
			s.m[k] = append(s.m[k], Interval{n, n})
		}
	}
	s.m[k] = normalize(s.m[k])
	return s
}

func popcount(m uint64) int {
	n := 0
	for ; m != 0; m &= m - 1 {
		n++
	}
	return n
}
