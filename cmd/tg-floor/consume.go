package main

import (
	"encoding/binary"
	"fmt"
	"net"
	"strconv"

	"github.com/jackc/pgx/v5/pgproto3"
)

// The consume floor: what any server must do for the bench's consume
// workload under topicgate's promises for a streaming consumer. A
// partition is read by one session at a time (a session takes a free
// partition at its first read and keeps it until it disconnects or has
// read it all; with none free it reads nothing, as topicgate's consumer
// group gives each partition to one session). A read sends the next rows of the session's
// partition, then makes the consumer's new position durable (one synced
// record) before it completes. It skips the consumer group's rebalancing
// and reading the bodies from disk (they stay in memory from the
// prefill).

// claim returns the partition the session reads (claimed, or -1): the one
// it holds while that has messages left, else a free one that has (the
// drained one is let go), else the one it holds.
func (q *queue) claim(claimed int) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	if claimed >= 0 && claimed < len(q.parts) && q.next[claimed] < len(q.parts[claimed]) {
		return claimed
	}
	for len(q.owned) < len(q.parts) {
		q.owned = append(q.owned, false)
	}
	for p := range q.parts {
		if !q.owned[p] && q.next[p] < len(q.parts[p]) {
			q.owned[p] = true
			if claimed >= 0 && claimed < len(q.owned) {
				q.owned[claimed] = false
			}
			return p
		}
	}
	return claimed
}

// unclaim frees partition p (the session ended).
func (q *queue) unclaim(p int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if p >= 0 && p < len(q.owned) {
		q.owned[p] = false
		if q.freed != nil {
			q.freed <- p
		}
	}
}

// readNext returns up to n messages of partition p after its position,
// and moves the position past them.
func (q *queue) readNext(p, n int) []taken {
	q.mu.Lock()
	defer q.mu.Unlock()
	var out []taken
	for len(out) < n && q.next[p] < len(q.parts[p]) {
		out = append(out, taken{p, q.next[p], q.parts[p][q.next[p]]})
		q.next[p]++
	}
	return out
}

// consumeRead answers a streaming consumer's read for session ss: its
// rows first (encoded into the session's buffer and written to conn), then
// in autocommit the new position's synced record, then the command's
// completion. In a transaction the position's record waits for COMMIT.
func (st *state) consumeRead(conn net.Conn, be *pgproto3.Backend, p portal, ss *session) error {
	if ss.tx == nil || ss.tx.from < 0 { // a transaction reads one partition
		ss.claimed = st.queue.claim(ss.claimed)
	}
	var got []taken
	if ss.claimed >= 0 {
		if ss.tx != nil && ss.tx.from < 0 {
			ss.tx.from = st.queue.position(ss.claimed)
		}
		got = st.queue.readNext(ss.claimed, p.limit)
	}
	if len(got) > 0 {
		if err := ss.writeRows(conn, be, p, got); err != nil {
			return err
		}
		last := got[len(got)-1]
		pos := record(last.part, last.off+1, 2)
		if ss.tx != nil {
			ss.tx.pos = pos
		} else {
			st.log.write([][]byte{pos})
		}
	}
	be.Send(&pgproto3.CommandComplete{CommandTag: fmt.Appendf(nil, "SELECT %d", len(got))})
	return nil
}

// writeRows writes got's rows to conn after what be holds, encoded
// straight into the session's buffer and written at once (building a
// pgproto3.DataRow per row allocates per column).
func (ss *session) writeRows(conn net.Conn, be *pgproto3.Backend, p portal, got []taken) error {
	if err := be.Flush(); err != nil {
		return err
	}
	ss.rowBuf = appendRows(ss.rowBuf[:0], p, got)
	_, err := conn.Write(ss.rowBuf)
	return err
}

// appendRows appends a DataRow message per message to b, with the
// portal's columns and result formats.
func appendRows(b []byte, p portal, got []taken) []byte {
	for _, m := range got {
		start := len(b)
		b = append(b, 'D', 0, 0, 0, 0)
		b = binary.BigEndian.AppendUint16(b, uint16(len(p.cols)))
		for j, c := range p.cols {
			var v int64
			switch c {
			case "partition":
				v = int64(m.part)
			case "offset":
				v = int64(m.off)
			default:
				b = binary.BigEndian.AppendUint32(b, uint32(len(m.body)))
				b = append(b, m.body...)
				continue
			}
			if format(p.formats, j) == 1 {
				b = binary.BigEndian.AppendUint32(b, 8)
				b = binary.BigEndian.AppendUint64(b, uint64(v))
				continue
			}
			lenAt := len(b)
			b = strconv.AppendInt(append(b, 0, 0, 0, 0), v, 10)
			binary.BigEndian.PutUint32(b[lenAt:], uint32(len(b)-lenAt-4))
		}
		binary.BigEndian.PutUint32(b[start+1:], uint32(len(b)-start-1))
	}
	return b
}
