package topology

import (
	"slices"
	"strconv"
)

// Interval is a closed range [Start, End] of transaction numbers, Start >= 1.
type Interval struct {
	// Start is the first transaction number in the range.
	Start uint64
	// End is the last transaction number in the range, End >= Start.
	End uint64
}

// String formats the interval as MySQL prints it: "n" or "n-m".
func (iv Interval) String() string {
	if iv.Start == iv.End {
		return strconv.FormatUint(iv.Start, 10)
	}
	return strconv.FormatUint(iv.Start, 10) + "-" + strconv.FormatUint(iv.End, 10)
}

// normalize sorts intervals and merges the overlapping and adjacent ones.
func normalize(ivs []Interval) []Interval {
	if len(ivs) == 0 {
		return nil
	}
	s := slices.Clone(ivs)
	slices.SortFunc(s, func(a, b Interval) int {
		switch {
		case a.Start < b.Start:
			return -1
		case a.Start > b.Start:
			return 1
		}
		return 0
	})
	out := []Interval{s[0]}
	for _, iv := range s[1:] {
		last := &out[len(out)-1]
		// Adjacent ranges merge: 1-5 and 6-9 is 1-9. last.End+1 cannot overflow
		// because End is at most the maximum accepted by parseInterval.
		if iv.Start <= last.End+1 {
			last.End = max(last.End, iv.End)
			continue
		}
		out = append(out, iv)
	}
	return out
}

// subtractIntervals returns the parts of a (normalized) not in b (normalized).
func subtractIntervals(a, b []Interval) []Interval {
	var out []Interval
	j := 0
	for _, iv := range a {
		cur := iv
		for j < len(b) && b[j].End < cur.Start {
			j++
		}
		k := j
		for ; k < len(b) && b[k].Start <= cur.End; k++ {
			if b[k].Start > cur.Start {
				out = append(out, Interval{cur.Start, b[k].Start - 1})
			}
			if b[k].End >= cur.End {
				cur.Start = cur.End + 1
				break
			}
			cur.Start = b[k].End + 1
		}
		if cur.Start <= cur.End {
			out = append(out, cur)
		}
	}
	return out
}

// countIntervals returns how many transaction numbers the intervals hold.
func countIntervals(ivs []Interval) uint64 {
	var n uint64
	for _, iv := range ivs {
		n += iv.End - iv.Start + 1
	}
	return n
}
