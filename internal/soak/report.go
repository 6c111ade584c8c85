package soak

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Report is what a soak saw.
type Report struct {
	Seed       uint64
	Rounds     []Round
	Violations []Violation
	// Acked is how many rows were acknowledged; Lost those not there at
	// the end.
	Acked   int
	Lost    []int
	Elapsed time.Duration
}

// Markdown renders the report: the run, then per fault kind the rounds,
// the write gaps and the convergence times.
func (r *Report) Markdown(command string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Soak: `%s` (seed %d), %d rounds in %s; %d acknowledged rows, %d lost; "+
		"sampled every %s, %d moments with two writable instances, %d with two that could acknowledge a write.\n\n",
		command, r.Seed, len(r.Rounds), r.Elapsed.Round(time.Second), r.Acked, len(r.Lost), samplePeriod, len(r.Violations), r.TwoAcknowledging())
	b.WriteString("| fault | rounds | longest write gap: median, max | converged: median, max |\n|---|---|---|---|\n")
	byKind := map[string][]Round{}
	var kinds []string
	for _, rd := range r.Rounds {
		if byKind[rd.Fault] == nil {
			kinds = append(kinds, rd.Fault)
		}
		byKind[rd.Fault] = append(byKind[rd.Fault], rd)
	}
	slices.Sort(kinds)
	for _, k := range kinds {
		rs := byKind[k]
		gaps, conv := make([]time.Duration, len(rs)), make([]time.Duration, len(rs))
		for i, rd := range rs {
			gaps[i], conv[i] = rd.Gap, rd.Converged
		}
		fmt.Fprintf(&b, "| %s | %d | %s, %s | %s, %s |\n", k, len(rs), median(gaps), slices.Max(gaps).Round(time.Millisecond),
			median(conv), slices.Max(conv).Round(time.Millisecond))
	}
	for _, v := range r.Violations {
		fmt.Fprintf(&b, "\n- two writable at %s", v)
	}
	return b.String()
}

// median returns the median of ds, rounded to the millisecond.
func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2].Round(time.Millisecond)
}

// TwoAcknowledging is how many moments had more than one writable server
// with a semi-sync replica connected: two that could acknowledge a write.
func (r *Report) TwoAcknowledging() int {
	n := 0
	for _, v := range r.Violations {
		if len(v.Acknowledging) > 1 {
			n++
		}
	}
	return n
}
