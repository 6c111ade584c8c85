package backup

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/example/mysql-operator/topology"
)

// Target is what a restore reaches: a backup as it is (neither Time nor
// GTID), or a point in time or a GTID beyond it by replaying archived
// binary logs.
type Target struct {
	// Backup is the backup to start from; empty picks the newest one that
	// ends before the point in time (or the newest of all).
	Backup string `json:"backup,omitempty"`
	// Time restores every transaction committed before it. The binary
	// log records whole seconds: Time's fraction is dropped.
	Time *time.Time `json:"time,omitempty"`
	// GTID restores every transaction up to and including it.
	GTID string `json:"gtid,omitempty"`
}

// Step replays one archived binary log file.
type Step struct {
	// Segment is the file.
	Segment Segment
	// After is the GTID position the replay starts after (mariadb-binlog
	// --start-position).
	After string
	// Stop is the last GTID to replay (--stop-position); empty replays to
	// the file's end.
	Stop string
	// StopTime stops before the first event at or after it
	// (--stop-datetime); nil replays to the file's end.
	StopTime *time.Time
}

// Plan is how a restore reaches its target.
type Plan struct {
	// Backup is the backup restored first.
	Backup Manifest
	// Steps replay archived binary logs, in order.
	Steps []Step
}

// position is one domain's place in the history.
type position struct {
	domain uint32
	seq    uint64
	// covered is the time before which every transaction is replayed.
	covered time.Time
}

// NewPlan plans a restore to t from the complete backups and the archive's
// segments. The error says what is available when the target is not.
func NewPlan(backups []Manifest, segments []Segment, t Target) (Plan, error) {
	if t.Time != nil && t.GTID != "" {
		return Plan{}, errors.New("a point in time and a GTID: name one")
	}
	b, err := pickBackup(backups, t)
	if err != nil {
		return Plan{}, err
	}
	start, err := backupPosition(b)
	if err != nil {
		return Plan{}, err
	}
	if t.Time == nil && t.GTID == "" {
		return Plan{Backup: b}, nil
	}
	goal, err := goalOf(t, start.domain)
	if err != nil {
		return Plan{}, err
	}
	segs, err := indexSegments(segments, start.domain)
	if err != nil {
		return Plan{}, err
	}
	steps, end := walk(start, segs, goal)
	if !goal.reached(end) {
		_, reach := walk(start, segs, goal.unbounded())
		return Plan{}, fmt.Errorf("%s is beyond what is archived: from backup %s (%s, GTID %s) the archive reaches %s",
			goal, b.Name, b.End.Format(time.RFC3339), b.GTID, reach.describe())
	}
	return Plan{Backup: b, Steps: steps}, nil
}

// pickBackup is the named backup, or the newest usable for the target.
func pickBackup(backups []Manifest, t Target) (Manifest, error) {
	if len(backups) == 0 {
		return Manifest{}, errors.New("no complete backup")
	}
	sorted := slices.SortedFunc(slices.Values(backups), func(a, b Manifest) int { return a.End.Compare(b.End) })
	if t.Backup != "" {
		i := slices.IndexFunc(sorted, func(m Manifest) bool { return m.Name == t.Backup })
		if i < 0 {
			return Manifest{}, fmt.Errorf("no complete backup named %q", t.Backup)
		}
		return sorted[i], nil
	}
	for i := len(sorted) - 1; i >= 0; i-- {
		if usable(sorted[i], t) {
			return sorted[i], nil
		}
	}
	return Manifest{}, fmt.Errorf("every complete backup is later than the target: the oldest, %s, ended %s at GTID %s",
		sorted[0].Name, sorted[0].End.Format(time.RFC3339), sorted[0].GTID)
}

// usable says whether b holds nothing after the target.
func usable(b Manifest, t Target) bool {
	switch {
	case t.Time != nil:
		return !b.End.After(t.Time.Truncate(time.Second))
	case t.GTID != "":
		pos, err := backupPosition(b)
		g, gerr := singleGTID(t.GTID)
		return err == nil && gerr == nil && pos.seq <= g.Seq
	}
	return true
}

// backupPosition is where a backup stands: one domain (the operator
// uses one) and its sequence number; an empty position is domain 0.
func backupPosition(b Manifest) (position, error) {
	set, err := topology.ParseMariaDBGTIDSet(b.GTID)
	if err != nil {
		return position{}, fmt.Errorf("backup %s: %w", b.Name, err)
	}
	p := position{covered: b.End}
	progress := set.Progress()
	if len(progress) > 1 {
		return position{}, fmt.Errorf("backup %s spans %d replication domains: a restore to a point in time follows one", b.Name, len(progress))
	}
	for d, seq := range progress {
		p.domain, p.seq = d, seq
	}
	return p, nil
}

// singleGTID parses one GTID.
func singleGTID(s string) (topology.MariaDBGTID, error) {
	set, err := topology.ParseMariaDBGTIDSet(s)
	if err != nil {
		return topology.MariaDBGTID{}, err
	}
	gs := set.GTIDs()
	if len(gs) != 1 {
		return topology.MariaDBGTID{}, fmt.Errorf("GTID %q: want one domain-server-seq", s)
	}
	return gs[0], nil
}

// span is a segment's place in one domain.
type span struct {
	Segment
	start, end uint64
}

// indexSegments returns the segments' spans in domain, by tenure and start.
func indexSegments(segments []Segment, domain uint32) ([]span, error) {
	out := make([]span, 0, len(segments))
	for _, s := range segments {
		start, err := topology.ParseMariaDBGTIDSet(s.Start)
		if err != nil {
			return nil, fmt.Errorf("segment %s/%s: %w", s.Tenure, s.BinlogFile, err)
		}
		end, err := topology.ParseMariaDBGTIDSet(s.End)
		if err != nil {
			return nil, fmt.Errorf("segment %s/%s: %w", s.Tenure, s.BinlogFile, err)
		}
		out = append(out, span{Segment: s, start: start.Progress()[domain], end: end.Progress()[domain]})
	}
	slices.SortFunc(out, func(a, b span) int {
		return cmp.Or(cmp.Compare(a.Tenure, b.Tenure), cmp.Compare(a.start, b.start), cmp.Compare(a.BinlogFile, b.BinlogFile))
	})
	return out, nil
}

// goal is a target in one domain: a sequence number, or a time.
type goal struct {
	domain uint32
	// seq is the last transaction to replay when bySeq.
	seq   uint64
	bySeq bool
	// time is the instant before which every transaction is replayed.
	time time.Time
}

// goalOf is t's goal in domain.
func goalOf(t Target, domain uint32) (goal, error) {
	if t.Time != nil {
		return goal{domain: domain, time: t.Time.UTC().Truncate(time.Second)}, nil
	}
	g, err := singleGTID(t.GTID)
	if err != nil {
		return goal{}, err
	}
	if g.Domain != domain {
		return goal{}, fmt.Errorf("GTID %s is in domain %d, but the history is in domain %d", t.GTID, g.Domain, domain)
	}
	return goal{domain: domain, seq: g.Seq, bySeq: true}, nil
}

// reached says whether p is at the goal.
func (g goal) reached(p position) bool {
	if g.bySeq {
		return p.seq >= g.seq
	}
	return !p.covered.Before(g.time)
}

// unbounded is a goal of the same kind that no history reaches: walking to
// it finds how far the archive goes.
func (g goal) unbounded() goal {
	if g.bySeq {
		g.seq = ^uint64(0)
		return g
	}
	g.time = time.Unix(1<<40, 0)
	return g
}

func (g goal) String() string {
	if g.bySeq {
		return fmt.Sprintf("GTID %d-*-%d", g.domain, g.seq)
	}
	return "point in time " + g.time.Format(time.RFC3339)
}

// describe says how far a walk went.
func (p position) describe() string {
	s := fmt.Sprintf("GTID sequence number %d of domain %d", p.seq, p.domain)
	if p.covered.IsZero() {
		return s + ", and no later time is archived"
	}
	return s + ", every transaction before " + p.covered.Format(time.RFC3339)
}

// gtidAt is a position as mariadb-binlog takes it: its window compares
// sequence numbers in the domain, whatever the server_id.
func gtidAt(domain uint32, seq uint64) string { return fmt.Sprintf("%d-0-%d", domain, seq) }

// walk replays segments from start toward g: at each position it takes the
// file of the latest tenure holding it, since a later primary's history is
// the one that was kept (an earlier one's last transactions may never have
// been acknowledged), and stops that file where a later tenure's own files
// begin; once a tenure is followed, no earlier one is. It returns the
// steps and where they end.
func walk(start position, segs []span, g goal) ([]Step, position) {
	var steps []Step
	cur := start
	used := make([]bool, len(segs))
	floor := ""
	for !g.reached(cur) {
		i := latestHolding(segs, cur.seq, used, floor)
		if i < 0 {
			break
		}
		used[i] = true
		s := segs[i]
		floor = s.Tenure
		stop := s.end
		for _, o := range segs {
			if o.Tenure > s.Tenure && o.start > cur.seq && o.start < stop {
				stop = o.start
			}
		}
		if g.bySeq && g.seq < stop {
			stop = g.seq
		}
		if !s.IsHead() {
			steps = append(steps, stepOf(s, cur, stop, g))
		}
		next := position{domain: cur.domain, seq: stop, covered: cur.covered}
		if stop == s.end && s.Last.After(cur.covered) {
			next.covered = s.Last
		}
		cur = next
	}
	return steps, cur
}

// stepOf replays s from cur to stop, or to g's time.
func stepOf(s span, cur position, stop uint64, g goal) Step {
	step := Step{Segment: s.Segment, After: gtidAt(cur.domain, cur.seq)}
	if stop < s.end {
		step.Stop = gtidAt(cur.domain, stop)
	}
	if !g.bySeq {
		at := g.time
		step.StopTime = &at
	}
	return step
}

// latestHolding returns the unused segment of the latest tenure, not
// before floor, that holds position seq (starts at or before it and ends
// at or after it), one that goes beyond it first; -1 when none does.
func latestHolding(segs []span, seq uint64, used []bool, floor string) int {
	best := -1
	for i, s := range segs {
		if used[i] || s.Tenure < floor || s.start > seq || s.end < seq {
			continue
		}
		if best < 0 || s.Tenure > segs[best].Tenure || (s.Tenure == segs[best].Tenure && s.end > segs[best].end) {
			best = i
		}
	}
	return best
}
