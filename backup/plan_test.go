package backup

import (
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)

// at is t0 plus s seconds.
func at(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }

// ptr returns a pointer to t.
func ptr(t time.Time) *time.Time { return &t }

// seg is a segment of tenure holding domain 0's transactions after start
// up to end, last written at last seconds.
func seg(tenure, file, start, end string, last int) Segment {
	return Segment{Tenure: tenure, BinlogFile: file, Start: start, End: end, Last: at(last), Object: File{Name: file}}
}

// describeSteps prints steps as "tenure/file after..stop@time".
func describeSteps(steps []Step) string {
	var out []string
	for _, s := range steps {
		d := s.Segment.Tenure + "/" + s.Segment.BinlogFile + " after " + s.After
		if s.Stop != "" {
			d += " stop " + s.Stop
		}
		if s.StopTime != nil {
			d += " before " + s.StopTime.Format("15:04:05")
		}
		out = append(out, d)
	}
	return strings.Join(out, "; ")
}

func TestNewPlan(t *testing.T) {
	backups := []Manifest{
		{Name: "b1", GTID: "0-1-10", End: at(10)},
		{Name: "b2", GTID: "0-1-30", End: at(100)},
	}
	// Tenure A (db-0) until a failover at seq 20 whose last transaction,
	// 21, was never acknowledged; tenure B (db-1) kept files from seq 15.
	failover := []Segment{
		seg("A", "a.1", "0-1-0", "0-1-20", 50),
		seg("A", "a.2", "0-1-20", "0-1-21", 60),
		seg("B", "b.1", "0-1-15", "0-1-20,0-2-25", 80),
	}
	tests := []struct {
		name     string
		backups  []Manifest
		segments []Segment
		target   Target
		backup   string
		steps    string
		err      string
	}{
		{name: "the newest backup", backups: backups, backup: "b2"},
		{name: "a named backup", backups: backups, target: Target{Backup: "b1"}, backup: "b1"},
		{name: "a named backup that is not there", backups: backups, target: Target{Backup: "b9"}, err: `no complete backup named "b9"`},
		{name: "no backup", err: "no complete backup"},
		{name: "a time in one tenure", backups: backups,
			segments: []Segment{seg("A", "a.1", "0-1-0", "0-1-12", 20), seg("A", "a.2", "0-1-12", "0-1-20", 40)},
			target:   Target{Time: ptr(at(30).Add(500 * time.Millisecond))}, backup: "b1",
			steps: "A/a.1 after 0-0-10 before 10:00:30; A/a.2 after 0-0-12 before 10:00:30"},
		{name: "a time past the archive", backups: backups,
			segments: []Segment{seg("A", "a.1", "0-1-0", "0-1-12", 20)},
			target:   Target{Time: ptr(at(30))},
			err:      "point in time 2026-12-06T10:00:30Z is beyond what is archived: from backup b1 (2026-12-06T10:00:10Z, GTID 0-1-10) the archive reaches GTID sequence number 12 of domain 0, every transaction before 2026-12-06T10:00:20Z"},
		{name: "a time before every backup", backups: backups, target: Target{Time: ptr(at(5))},
			err: "every complete backup is later than the target: the oldest, b1, ended 2026-12-06T10:00:10Z at GTID 0-1-10"},
		{name: "a GTID in the middle of a file", backups: backups,
			segments: []Segment{seg("A", "a.1", "0-1-0", "0-1-20", 20)},
			target:   Target{GTID: "0-1-15"}, backup: "b1", steps: "A/a.1 after 0-0-10 stop 0-0-15"},
		{name: "a GTID of another domain", backups: backups, target: Target{GTID: "1-1-15"},
			err: "GTID 1-1-15 is in domain 1, but the history is in domain 0"},
		{name: "a failover: the later tenure's history from where it begins", backups: backups, segments: failover,
			target: Target{GTID: "0-2-25"}, backup: "b1",
			steps: "A/a.1 after 0-0-10 stop 0-0-15; B/b.1 after 0-0-15"},
		{name: "a failover: the unacknowledged transaction is never replayed", backups: backups, segments: failover,
			target: Target{Time: ptr(at(70))}, backup: "b1",
			steps: "A/a.1 after 0-0-10 stop 0-0-15 before 10:01:10; B/b.1 after 0-0-15 before 10:01:10"},
		{name: "an idle later tenure: its head covers time, the earlier tenure's tail is not taken", backups: backups,
			segments: []Segment{seg("A", "a.1", "0-1-0", "0-1-21", 50), {Tenure: "B", BinlogFile: "head", Start: "0-1-20", End: "0-1-20", Last: at(90)}},
			target:   Target{Time: ptr(at(95))},
			err:      "beyond what is archived: from backup b1 (2026-12-06T10:00:10Z, GTID 0-1-10) the archive reaches GTID sequence number 20 of domain 0, every transaction before 2026-12-06T10:01:30Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := NewPlan(tt.backups, tt.segments, tt.target)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.Backup.Name != tt.backup {
				t.Errorf("backup %s, want %s", p.Backup.Name, tt.backup)
			}
			if got := describeSteps(p.Steps); got != tt.steps {
				t.Errorf("steps\n got %s\nwant %s", got, tt.steps)
			}
		})
	}
}

// TestPrunable: only files wholly before the oldest backup kept, in
// position and in time, may go.
func TestPrunable(t *testing.T) {
	oldest := &Manifest{Name: "b", GTID: "0-1-30", Start: at(100), End: at(110)}
	segs := []Segment{
		seg("A", "a.1", "0-1-0", "0-1-20", 50),                                            // before: goes
		seg("A", "a.2", "0-1-20", "0-1-30", 60),                                           // ends at the backup's position: stays
		seg("A", "a.3", "0-1-20", "0-1-25", 105),                                          // written while the backup ran: stays
		{Tenure: "A", BinlogFile: HeadFile, Start: "0-1-10", End: "0-1-10", Last: at(40)}, // an old head: goes
		seg("B", "b.1", "0-1-30", "0-2-40", 200),
	}
	var got []string
	for _, s := range Prunable(oldest, segs) {
		got = append(got, s.Tenure+"/"+s.BinlogFile)
	}
	if strings.Join(got, " ") != "A/a.1 A/head" {
		t.Errorf("prunable %v, want A/a.1 A/head", got)
	}
	if Prunable(nil, segs) != nil || Prunable(&Manifest{GTID: "0-1-5,1-1-5"}, segs) != nil {
		t.Error("pruned without one backup of one domain")
	}
	if keys := SegmentKeys(segs[0]); strings.Join(keys, " ") != "a.1 binlogs/A/a.1.json" {
		t.Errorf("keys %v", keys)
	}
}
