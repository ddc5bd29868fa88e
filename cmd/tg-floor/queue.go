package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	"github.com/jackc/pgx/v5/pgproto3"
)

// The queue floor: what any server must do for the bench's queue workload
// under topicgate's promises for a shared consumer. An acquisition makes
// the delivery counts of the messages it hands out durable before their
// rows go out (a record per message, synced); an acknowledgement is
// durable before it is confirmed (a record per message, synced once per
// pipeline, at its Sync, as topicgate's deferred acks are). What it skips:
// locks that expire, redelivery, dead letters, the consumer's window, and
// reading the bodies from disk (they stay in memory from the prefill).

// oidInt8Array is int8[]: the type of the acknowledgement's offset list.
const oidInt8Array = 1016

// maxParts bounds the partitions a prefill may name.
const maxParts = 1024

// queue holds the prefilled messages by partition and how far each
// partition has been handed out. The bench acknowledges every message it
// acquires, so nothing handed out comes back.
type queue struct {
	mu     sync.Mutex
	parts  [][][]byte // bodies by partition and offset
	next   []int      // the first offset not handed out (or read), per partition
	cursor int        // the partition the next acquisition starts at
	owned  []bool     // partitions a session reads as a streaming consumer (consume.go)
	shared bool       // the topic's consumer is shared (a queue), else streaming
	freed  chan int   // if set (tests), told each partition a session's end frees
}

// add appends a prefilled message to partition p (< maxParts).
func (q *queue) add(p int, body []byte) {
	if p < 0 || p >= maxParts {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.parts) <= p {
		q.parts = append(q.parts, nil)
		q.next = append(q.next, 0)
	}
	q.parts[p] = append(q.parts[p], body)
}

// reset forgets every message (a DROP).
func (q *queue) reset() {
	q.mu.Lock()
	q.parts, q.next, q.cursor, q.owned = nil, nil, 0, nil
	q.mu.Unlock()
}

// taken is one acquired message.
type taken struct {
	part, off int
	body      []byte
}

// take hands out up to n messages, one partition after the other (round
// robin, as a shared consumer is fair across partitions).
func (q *queue) take(n int) []taken {
	q.mu.Lock()
	defer q.mu.Unlock()
	var out []taken
	for empty := 0; len(out) < n && empty < len(q.parts); {
		p := q.cursor % len(q.parts)
		q.cursor++
		if q.next[p] >= len(q.parts[p]) {
			empty++
			continue
		}
		empty = 0
		out = append(out, taken{p, q.next[p], q.parts[p][q.next[p]]})
		q.next[p]++
	}
	return out
}

// record is the durable trace of a delivery (count 1) or an
// acknowledgement (count 0) of one message, or of a streaming consumer's
// position (2: off is the next offset to read).
func record(part, off int, count byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(part))
	b = binary.BigEndian.AppendUint64(b, uint64(off))
	return append(b, count)
}

// acquire answers a shared consumer's read: it takes up to the statement's
// limit, makes their delivery counts durable, then sends their rows.
func (st *state) acquire(be *pgproto3.Backend, p portal) {
	got := st.queue.take(p.limit)
	if len(got) > 0 {
		recs := make([][]byte, len(got))
		for i, m := range got {
			recs[i] = record(m.part, m.off, 1)
		}
		st.log.write(recs)
	}
	sendRows(be, p, got)
	be.Send(&pgproto3.CommandComplete{CommandTag: fmt.Appendf(nil, "SELECT %d", len(got))})
}

// sendRows sends a DataRow per message, with the portal's columns.
func sendRows(be *pgproto3.Backend, p portal, got []taken) {
	for _, m := range got {
		vals := make([][]byte, len(p.cols))
		for j, c := range p.cols {
			switch c {
			case "partition":
				vals[j] = int8Value(int64(m.part), format(p.formats, j))
			case "offset":
				vals[j] = int8Value(int64(m.off), format(p.formats, j))
			default:
				vals[j] = m.body
			}
		}
		be.Send(&pgproto3.DataRow{Values: vals})
	}
}

// ack answers an acknowledgement (DELETE ... WHERE partition = $1 AND
// offset = ANY($2)): its records join the session's pending ones, made
// durable at the pipeline's Sync.
func ack(p portal, pending [][]byte) ([][]byte, int, error) {
	if len(p.args) != 2 || len(p.args[0]) != 8 {
		return pending, 0, errors.New("acknowledgement: want an int8 partition and an int8[] of offsets")
	}
	part := int(binary.BigEndian.Uint64(p.args[0]))
	offs, err := int8Array(p.args[1])
	if err != nil {
		return pending, 0, err
	}
	for _, o := range offs {
		pending = append(pending, record(part, int(o), 0))
	}
	return pending, len(offs), nil
}

// int8Array decodes a one-dimensional int8[] in binary format.
func int8Array(b []byte) ([]int64, error) {
	if len(b) < 12 {
		return nil, errors.New("int8[]: short header")
	}
	ndim := binary.BigEndian.Uint32(b)
	if ndim == 0 {
		return nil, nil
	}
	if ndim != 1 || len(b) < 20 {
		return nil, errors.New("int8[]: want one dimension")
	}
	n := int(binary.BigEndian.Uint32(b[12:]))
	b = b[20:]
	out := make([]int64, 0, n)
	for range n {
		if len(b) < 12 || binary.BigEndian.Uint32(b) != 8 {
			return nil, errors.New("int8[]: bad element")
		}
		out = append(out, int64(binary.BigEndian.Uint64(b[4:])))
		b = b[12:]
	}
	return out, nil
}
