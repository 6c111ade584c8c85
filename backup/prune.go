package backup

import (
	"time"

	"github.com/example/mysql-operator/topology"
)

// Prunable returns the archived files no restore from the oldest backup
// kept can need: those whose every transaction is at or before its GTID
// position and that were last written before it began (so that no point in
// time after the backup needs them either). With no backup kept, or a
// position of more than one domain, it returns none.
func Prunable(oldest *Manifest, segments []Segment) []Segment {
	if oldest == nil {
		return nil
	}
	pos, err := topology.ParseMariaDBGTIDSet(oldest.GTID)
	if err != nil {
		return nil
	}
	progress := pos.Progress()
	if len(progress) != 1 {
		return nil
	}
	var domain uint32
	var seq uint64
	for d, s := range progress {
		domain, seq = d, s
	}
	var out []Segment
	for _, s := range segments {
		end, err := topology.ParseMariaDBGTIDSet(s.End)
		if err != nil || len(end.Progress()) > 1 {
			continue
		}
		if end.Progress()[domain] < seq && s.Last.Before(oldest.Start.Add(-time.Second)) {
			out = append(out, s)
		}
	}
	return out
}

// SegmentKeys are the objects of s: its file (none for a head) and its index.
func SegmentKeys(s Segment) []string {
	keys := []string{SegmentIndexKey(s.Tenure, s.BinlogFile)}
	if !s.IsHead() {
		keys = append([]string{s.Object.Name}, keys...)
	}
	return keys
}
