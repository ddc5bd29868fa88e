package main

import (
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
)

// The latency floor: what any server must do for the bench's latency
// workload under topicgate's promises for a streaming consumer that waits.
// An INSERT into a topic with a streaming consumer is acknowledged once
// its message is durable, and only then may a reader see it (a message
// read before its sync could be lost, and its offset reused, by a crash);
// a read with WAIT answers at once if there is anything past the
// consumer's position, else it waits until an INSERT's sync makes
// something readable or the wait ends; it sends the rows, then makes the
// consumer's new position durable (one synced record) before it
// completes, as topicgate's autocommit read does. It skips partitions
// (the messages are one sequence, reported as partition i%4, offset i/4)
// and reading the bodies from disk.

// tail holds the messages INSERTed into the topics that have a streaming
// consumer, once synced, and the consumer's position.
type tail struct {
	mu       sync.Mutex
	consumed map[string]bool // topics created with a streaming consumer
	bodies   [][]byte        // the tailed topic's synced messages past the position, in order
	pos      int             // the consumer's position: the index of bodies[0]
	grew     chan struct{}   // closed (and replaced) when bodies grow
}

// created notes a CREATE TOPIC statement: whether its topic has a
// streaming consumer, whose readers may wait for INSERTs.
func (t *tail) created(q string) {
	lower := strings.ToLower(q)
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.consumed == nil {
		t.consumed = map[string]bool{}
	}
	words := strings.Fields(q) // CREATE TOPIC name ...
	if len(words) < 3 {
		return
	}
	name, _, _ := strings.Cut(words[2], "(")
	t.consumed[strings.Trim(name, `"`)] = strings.Contains(lower, "(consumer") && !strings.Contains(lower, "'shared'")
}

// reset forgets every message (a DROP).
func (t *tail) reset() {
	t.mu.Lock()
	t.bodies, t.pos = nil, 0
	t.mu.Unlock()
}

// appended makes msgs, INSERTed into topic and now synced, readable, and
// wakes the readers waiting for them.
func (t *tail) appended(topic string, msgs [][]byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.consumed[topic] {
		return
	}
	t.bodies = append(t.bodies, msgs...)
	if t.grew != nil {
		close(t.grew)
		t.grew = nil
	}
}

// next returns up to n messages past the consumer's position and moves it
// past them; with none, it returns a channel closed when some arrive.
func (t *tail) next(n int) ([]taken, <-chan struct{}) {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []taken
	for ; len(out) < n && len(t.bodies) > 0; t.pos++ {
		out = append(out, taken{t.pos % 4, t.pos / 4, t.bodies[0]})
		t.bodies = t.bodies[1:] // read: the floor keeps only what is past the position
	}
	if len(out) > 0 {
		return out, nil
	}
	if t.grew == nil {
		t.grew = make(chan struct{})
	}
	return nil, t.grew
}

// waitRead answers a streaming consumer's read with WAIT: the messages
// past the position (waiting up to p.wait for one), their rows, the new
// position's synced record, then the command's completion.
func (st *state) waitRead(conn net.Conn, be *pgproto3.Backend, p portal, ss *session) error {
	got, grew := st.tail.next(p.limit)
	if len(got) == 0 {
		timer := time.NewTimer(p.wait)
		select {
		case <-grew:
			got, _ = st.tail.next(p.limit)
		case <-timer.C:
		}
		timer.Stop()
	}
	if len(got) > 0 {
		if err := ss.writeRows(conn, be, p, got); err != nil {
			return err
		}
		last := got[len(got)-1]
		st.log.write([][]byte{record(last.part, last.off+1, 2)})
	}
	be.Send(&pgproto3.CommandComplete{CommandTag: fmt.Appendf(nil, "SELECT %d", len(got))})
	return nil
}
