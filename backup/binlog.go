package backup

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/example/mysql-operator/topology"
)

// A MariaDB binary log file: a 4-byte magic number, then events, each
// with a 19-byte header (timestamp, type, server_id, length, next
// position, flags) and a body. The index of an archived file needs only
// the headers' times and the GTIDs: the Gtid_list event at the start (the
// binlog state before the file) and each GTID event's domain, server_id
// and sequence number, so Scan reads those and skips every other body.
const (
	headerLen          = 19
	typeRotate         = 4
	typeStop           = 3
	typeGTID           = 162
	typeGTIDList       = 163
	typeStartEncrypted = 164
)

// binlogMagic starts every binary log file.
var binlogMagic = []byte{0xfe, 'b', 'i', 'n'}

// Summary is what Scan found in a binary log file.
type Summary struct {
	// Start is the binlog state at the file's start (its Gtid_list event).
	Start topology.MariaDBGTIDSet
	// End is Start with every GTID of the file.
	End topology.MariaDBGTIDSet
	// Transactions is the number of GTID events.
	Transactions int
	// First is the time of the first transaction, zero without one.
	First time.Time
	// Last is the time of the last event: for a closed file, its rotation.
	Last time.Time
	// Closed says the file ends with a Rotate or Stop event: nothing more
	// will be written to it.
	Closed bool
}

// Scan reads a MariaDB binary log file to its end.
func Scan(r io.Reader) (Summary, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	magic := make([]byte, len(binlogMagic))
	if _, err := io.ReadFull(br, magic); err != nil || string(magic) != string(binlogMagic) {
		return Summary{}, errors.New("not a binary log file: no magic number")
	}
	sc := scanner{r: br, seen: map[[2]uint32]uint64{}, header: make([]byte, headerLen), body: make([]byte, 0, 4096)}
	for n := 0; ; n++ {
		done, err := sc.event()
		if err != nil {
			return Summary{}, fmt.Errorf("event %d: %w", n, err)
		}
		if done {
			break
		}
	}
	return sc.s.withSets(sc.startList, sc.seen)
}

// scanner is the state of a Scan.
type scanner struct {
	r         *bufio.Reader
	s         Summary
	seen      map[[2]uint32]uint64
	startList []topology.MariaDBGTID
	header    []byte
	body      []byte
}

// event reads one event into the summary; done at the file's end.
func (sc *scanner) event() (done bool, err error) {
	switch _, err := io.ReadFull(sc.r, sc.header); {
	case errors.Is(err, io.EOF):
		return true, nil
	case err != nil:
		return false, err
	}
	h := sc.header
	ts := time.Unix(int64(binary.LittleEndian.Uint32(h[0:])), 0).UTC()
	typ, server, length := h[4], binary.LittleEndian.Uint32(h[5:]), binary.LittleEndian.Uint32(h[9:])
	if length < headerLen {
		return false, fmt.Errorf("length %d is shorter than its header", length)
	}
	size := int(length - headerLen)
	sc.s.Last, sc.s.Closed = ts, typ == typeRotate || typ == typeStop
	switch typ {
	case typeStartEncrypted:
		return false, errors.New("the binary log is encrypted: archiving encrypted binary logs is not supported")
	case typeGTID, typeGTIDList:
		if cap(sc.body) < size {
			sc.body = make([]byte, size)
		}
		body := sc.body[:size]
		if _, err := io.ReadFull(sc.r, body); err != nil {
			return false, err
		}
		if typ == typeGTIDList {
			list, err := parseGTIDList(body)
			sc.startList = append(sc.startList, list...)
			return false, err
		}
		return false, sc.gtid(body, server, ts)
	}
	_, err = sc.r.Discard(size)
	return false, err
}

// gtid records the GTID event body of server at ts.
func (sc *scanner) gtid(body []byte, server uint32, ts time.Time) error {
	if len(body) < 12 {
		return fmt.Errorf("a GTID event of %d bytes", len(body))
	}
	seq, domain := binary.LittleEndian.Uint64(body[0:]), binary.LittleEndian.Uint32(body[8:])
	k := [2]uint32{domain, server}
	sc.seen[k] = max(sc.seen[k], seq)
	if sc.s.Transactions == 0 {
		sc.s.First = ts
	}
	sc.s.Transactions++
	return nil
}

// withSets sets Start and End from the Gtid_list and the GTIDs seen.
func (s Summary) withSets(start []topology.MariaDBGTID, seen map[[2]uint32]uint64) (Summary, error) {
	var err error
	if s.Start, err = topology.ParseMariaDBGTIDSet(joinGTIDs(start)); err != nil {
		return s, err
	}
	all := start
	for k, seq := range seen {
		all = append(all, topology.MariaDBGTID{Domain: k[0], Server: k[1], Seq: seq})
	}
	s.End, err = topology.ParseMariaDBGTIDSet(joinGTIDs(all))
	return s, err
}

// parseGTIDList parses a Gtid_list event's body: a count (its top four
// bits are flags), then domain, server_id and sequence number per GTID.
func parseGTIDList(b []byte) ([]topology.MariaDBGTID, error) {
	if len(b) < 4 {
		return nil, errors.New("a Gtid_list event without a count")
	}
	count := int(binary.LittleEndian.Uint32(b) & 0x0fffffff)
	if len(b) < 4+16*count {
		return nil, fmt.Errorf("a Gtid_list event of %d GTIDs in %d bytes", count, len(b))
	}
	out := make([]topology.MariaDBGTID, count)
	for i := range out {
		e := b[4+16*i:]
		out[i] = topology.MariaDBGTID{Domain: binary.LittleEndian.Uint32(e), Server: binary.LittleEndian.Uint32(e[4:]),
			Seq: binary.LittleEndian.Uint64(e[8:])}
	}
	return out, nil
}

// joinGTIDs prints GTIDs as a list.
func joinGTIDs(gs []topology.MariaDBGTID) string {
	out := ""
	for i, g := range gs {
		if i > 0 {
			out += ","
		}
		out += g.String()
	}
	return out
}
