package consume

import (
	"context"

	"topicgate/sql/pgerror"
	"topicgate/topicstore"
	"topicgate/txn"
	"topicgate/wire"
)

// A consumer read's effects belong to the rows it returns: a read whose
// rows never reached the client must not move the consumer (the messages
// would be lost for it) nor spend a shared message's delivery attempt. So
// a statement that returns rows collects those effects in a delivery while
// it reads, and settles them only when its rows are out:
//
//   - Finish, after the last row was written and flushed to the client
//     (and the client was still there): an autocommit read's positions
//     commit, each only if nobody moved it since the read began. One that
//     was moved meanwhile (a rebalance gave the partition to another read
//     session, which committed first) keeps the other's position: the
//     rows were delivered, so nothing is lost, and the statement succeeds;
//     some rows may come again (consumer reads are at least once). A statement that only acquired shared messages
//     finishes without a flush: nothing is lost if its rows never arrive
//     (the locks expire).
//   - Abandon, when the statement failed, was cancelled, lost its client,
//     or its portal was closed unfinished: nothing commits, and the shared
//     messages it acquired go back to the queue uncounted.
//
// Inside a transaction block positions move at COMMIT (txn records them),
// so a delivery only keeps the shared messages acquired by the statement.

// Delivery is one row-returning statement's pending effects. The zero
// value is an empty one; a nil *Delivery is a statement without any.
type Delivery struct {
	reads    []partRead // autocommit streaming reads, committed by finish
	acquired []sharedAcquired
	// pins are what the statement's reads pinned (Group.join),
	// unpinned when the delivery settles.
	pins    []pinned
	settled bool
}

// pinned is one read's pinned partitions of a read group.
type pinned struct {
	g     *Group
	parts []int32
}

// pin notes that a read of the statement pinned parts of g.
func (d *Delivery) pin(g *Group, parts []int32) {
	d.pins = append(d.pins, pinned{g, parts})
}

// unpinLast releases the pins of the statement's last read (one that
// found nothing and waits).
func (d *Delivery) unpinLast(rd *Reader) {
	if n := len(d.pins); n > 0 {
		d.pins[n-1].g.unpin(rd.cfg.PID, d.pins[n-1].parts)
		d.pins = d.pins[:n-1]
	}
}

// unpin releases what the statement pinned.
func (d *Delivery) unpin(rd *Reader) {
	for _, p := range d.pins {
		p.g.unpin(rd.cfg.PID, p.parts)
	}
	d.pins = nil
}

// sharedAcquired is what one shared read of the statement acquired.
type sharedAcquired struct {
	k    sharedKey
	refs []topicstore.MsgRef
}

func (d *Delivery) pending() bool {
	return d != nil && !d.settled && (len(d.reads) > 0 || len(d.acquired) > 0)
}

// readFrom returns where an earlier read of the same statement left k.
func (d *Delivery) readFrom(k txn.ReadKey) (int64, bool) {
	if d == nil {
		return 0, false
	}
	for _, r := range d.reads {
		if r.key == k {
			return r.next, true
		}
	}
	return 0, false
}

// record adds an autocommit read; a partition read again by the same
// statement keeps its first expected position.
func (d *Delivery) record(r partRead) {
	for i := range d.reads {
		if d.reads[i].key == r.key {
			d.reads[i].next = r.next
			return
		}
	}
	d.reads = append(d.reads, r)
}

// Finish settles d once the statement's rows were written to out: they are
// flushed first, and a client that is gone by then gets nothing committed.
func (d *Delivery) Finish(ctx context.Context, rd *Reader, out wire.Output, sentRows int64) error {
	if d == nil {
		return nil
	}
	defer d.unpin(rd) // after the commit: the partitions may move now
	if !d.pending() {
		return nil
	}
	if len(d.reads) == 0 {
		// Only shared messages were acquired: nothing commits, so there is
		// no need to flush before CommandComplete (a queue's hot path). If
		// the rows then never arrive, the locks expire, or are released
		// when the session closes, as failed attempts.
		d.settled = true
		return nil
	}
	if sentRows > 0 {
		if err := out.Flush(); err != nil {
			d.Abandon(rd, sentRows)
			return err
		}
	}
	if ctx.Err() != nil {
		d.Abandon(rd, sentRows)
		return pgerror.New(pgerror.CodeQueryCanceled, "canceling statement due to user request")
	}
	d.settled = true
	// The statement's implicit transaction, at least once: a position
	// another read session (after a rebalance) or an UPDATE sys.consumers
	// moved since this read started keeps the other's value. The rows
	// were delivered, so nothing is lost; some may come again.
	_, err := rd.cfg.Conn.Statement(ctx, func(tx *txn.Txn) error {
		tx.AtLeastOnce()
		recordReads(tx, d.reads)
		return nil
	})
	return err
}

// Abandon settles d without effect: positions stay and acquired shared
// messages are available again. Their delivery is not counted unless some
// of the statement's rows were written (sent): they may have reached the
// client, and a message that makes its workers die must still reach
// max_processing_attempts.
//
// sent is how many rows were written; a statement's one shared read
// returns its messages in the order acquired, so only that many are
// counted then.
func (d *Delivery) Abandon(rd *Reader, sent int64) {
	if d == nil {
		return
	}
	d.unpin(rd)
	if d.settled {
		return
	}
	d.settled = true
	for _, a := range d.acquired {
		counted := 0 // how many of a.refs count as delivered
		switch {
		case sent > 0 && len(d.acquired) == 1:
			counted = int(min(sent, int64(len(a.refs))))
		case sent > 0:
			counted = len(a.refs)
		}
		rd.cfg.Conn.Release(a.k, a.refs, counted)
	}
}
