package consume

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"topicgate/planner"
	"topicgate/planner/plantree"
	"topicgate/rowexec"
	"topicgate/sql/pgerror"
	"topicgate/sql/values"
	"topicgate/topicstore"
	"topicgate/txn"
	"topicgate/wire"
)

// readOpts are a consumer read's evaluated options.
type readOpts struct {
	wait        time.Duration
	maxBytes    int64 // 0 = no cap
	skipBefore  time.Time
	partitions  map[int32]bool // nil = every held partition
	maxInFlight int64          // 0 = no cap
	limit       int64          // -1 = no limit

	// enc, when set, receives the rows encoded (see direct.go); cols
	// are the projected message columns.
	enc  *wire.RowEncoder
	cols []plantree.MsgCol
}

// readRows is what a consumer read gathered: materialized rows, or the
// count of rows encoded into readOpts.enc.
type readRows struct {
	rows [][]any
	enc  *wire.RowEncoder
}

func (r *readRows) len() int {
	if r.enc != nil {
		return r.enc.Rows()
	}
	return len(r.rows)
}

func (r *readRows) iter() rowexec.Iter {
	if r.enc != nil {
		return &encodedIter{enc: r.enc}
	}
	return rowexec.Rows(r.rows)
}

// readOptions evaluates the read's LIMIT and WITH (...) options.
func (rd *Reader) readOptions(ec *rowexec.EvalCtx, n *plantree.ConsumerReadNode) (readOpts, error) {
	cr := n.Read
	o := readOpts{limit: -1}
	var err error
	if o.limit, err = rowexec.EvalCount(ec, n.Limit, "LIMIT"); err != nil {
		return o, err
	}
	evalOpt := func(e plantree.Expr) (any, error) {
		if e == nil {
			return nil, nil
		}
		return ec.Eval(e, nil)
	}
	v, err := evalOpt(cr.Wait)
	if err != nil {
		return o, err
	}
	if d, ok := v.(time.Duration); ok {
		if d < 0 {
			return o, pgerror.Newf(pgerror.CodeInvalidParameterValue, "read option \"wait\" must not be negative, got %s", values.FormatInterval(d))
		}
		o.wait = d
	}
	if v, err = evalOpt(cr.MaxBytes); err != nil {
		return o, err
	}
	if x, ok := v.(int64); ok {
		if x <= 0 {
			return o, pgerror.Newf(pgerror.CodeInvalidParameterValue, "read option \"max_bytes\" must be positive, got %d", x)
		}
		o.maxBytes = x
	}
	if v, err = evalOpt(cr.MaxInFlight); err != nil {
		return o, err
	}
	if x, ok := v.(int64); ok {
		if x <= 0 {
			return o, pgerror.Newf(pgerror.CodeInvalidParameterValue, "read option \"partition_max_in_flight_bytes\" must be positive, got %d", x)
		}
		o.maxInFlight = x
	}
	if v, err = evalOpt(cr.ReadFrom); err != nil {
		return o, err
	}
	if t, ok := v.(time.Time); ok {
		o.skipBefore = t
	}
	if v, err = evalOpt(cr.MaxLag); err != nil {
		return o, err
	}
	if d, ok := v.(time.Duration); ok {
		if d < 0 {
			return o, pgerror.New(pgerror.CodeInvalidParameterValue, "read option \"max_lag\" must not be negative")
		}
		if t := ec.Now().Add(-d); t.After(o.skipBefore) {
			o.skipBefore = t
		}
	}
	if v, err = evalOpt(cr.Partitions); err != nil {
		return o, err
	}
	if str, ok := v.(string); ok {
		ids, err := planner.ParsePartitionList(str)
		if err != nil {
			return o, err
		}
		ti, err := rd.cfg.Store.Topic(cr.Topic)
		if err != nil {
			return o, txn.StoreError(err, cr.Topic)
		}
		has := map[int32]bool{}
		for _, p := range ti.Partitions {
			has[p.ID] = true
		}
		o.partitions = map[int32]bool{}
		for _, id := range ids {
			if !has[id] {
				return o, pgerror.Newf(pgerror.CodeInvalidParameterValue,
					"read option \"partitions\" names partition %d, which topic \"%s\" does not have (it has %d partitions)", id, cr.Topic, len(ti.Partitions))
			}
			o.partitions[id] = true
		}
	}
	return o, nil
}

// partRead is what one read took from one partition.
type partRead struct {
	key          txn.ReadKey
	expect, next int64
	bytes        int64
}

// read reads the next messages as a streaming consumer from the
// partitions this session holds, long-polling when asked, and moves the
// consumer's position: at once in autocommit, at COMMIT in a transaction.
// The node's filter, projection and LIMIT are applied as it reads (rule
// fuseConsumerRead made them its own).
func (rd *Reader) read(ctx context.Context, ec *rowexec.EvalCtx, n *plantree.ConsumerReadNode, direct func() *wire.RowEncoder) (rowexec.Iter, error) {
	cr := n.Read
	o, err := rd.readOptions(ec, n)
	if err != nil {
		return nil, err
	}
	if direct != nil && n.Filter == nil {
		if o.cols = directCols(n); o.cols != nil {
			o.enc = direct()
		}
	}
	st := rd.cfg.Store
	var deadline <-chan time.Time
	if o.wait > 0 {
		timer := time.NewTimer(o.wait)
		defer timer.Stop()
		deadline = timer.C
	}
	g := rd.cfg.Groups.Get(cr.Topic, cr.Consumer)
	rd.join(g, cr.Topic)
	conflicts := 0
	// On a shared store a read that holds nothing yet waits, even without
	// WAIT, up to clusterSettle for its gateway's share (cluster.go).
	var settle <-chan time.Time
	var settleTimer *time.Timer
	var settleFrom time.Time
	settled := false
	// A read that finds nothing while its share is still pinned by
	// another session's autocommit read waits for that read (handoff.go).
	var handoff <-chan time.Time
	handedOff := false
	for {
		ti, err := st.Topic(cr.Topic)
		if err != nil {
			return nil, txn.StoreError(err, cr.Topic)
		}
		if !hasConsumer(ti, cr.Consumer) {
			return nil, pgerror.Newf(pgerror.CodeUndefinedObject, "consumer \"%s\" does not exist in topic \"%s\"", cr.Consumer, cr.Topic)
		}
		parts, parents, err := readable(ti, func() (map[int32]int64, error) { return st.Positions(cr.Topic, cr.Consumer) })
		if err != nil {
			return nil, txn.StoreError(err, cr.Topic)
		}
		tx := rd.cfg.Conn.Current()
		pin := tx == nil && rd.deliver != nil
		jr := joinReq{pid: rd.cfg.PID, partitions: parts, parents: parents, now: rd.cfg.Groups.clock(),
			idle: rd.cfg.Idle, pin: pin, only: o.partitions}
		if tx != nil {
			jr.txID = tx.ID
			rd.noteTxHold(g)
		}
		held, regrouped := g.join(jr)
		members := g.clusterSeen()
		if pin {
			rd.deliver.pin(g, held)
		}
		changed, err := st.Changed(cr.Topic)
		if err != nil {
			return nil, txn.StoreError(err, cr.Topic)
		}
		if o.enc != nil {
			o.enc.Reset()
		}
		rows, reads, err := rd.readHeld(ctx, ec, n, held, o)
		if err != nil {
			return nil, err
		}
		wait := deadline != nil
		pending := rows.len() == 0 && o.limit != 0 && g.clusterPending()
		if !wait && !settled && pending {
			if settle == nil {
				settleTimer = time.NewTimer(clusterSettle)
				defer settleTimer.Stop()
				settle, settleFrom = settleTimer.C, time.Now()
			}
			wait = true
		}
		if !wait && !handedOff && rows.len() == 0 && o.limit != 0 && g.awaitsRead(rd.cfg.PID) {
			if handoff == nil {
				t := time.NewTimer(pinHandoffWait)
				defer t.Stop()
				handoff = t.C
			}
			wait = true
		}
		if rows.len() > 0 || !wait || o.limit == 0 {
			// LIMIT 0 joins the read session and returns at once, WAIT or not.
			err := rd.commitReads(ctx, reads)
			if err != nil && tx == nil && txn.IsConflict(err) && conflicts < maxReadRetries {
				// In autocommit nothing was sent yet: a rebalance moved a
				// partition under this read, so read again from the new
				// positions instead of failing the statement.
				conflicts++
				continue
			}
			if err != nil {
				return nil, txn.StoreError(err, cr.Topic)
			}
			return rows.iter(), nil
		}
		if pin {
			rd.deliver.unpinLast(rd) // waiting reads no message: nothing to keep
		}
		// Waiting for its share, a read brings this gateway's view of the
		// group up to the stream's every clusterRecheck (a read barrier):
		// the release of a session that closed on another gateway must
		// not wait for this gateway's fold, which stalls for seconds when
		// the node its consumer was on dies.
		var recheck <-chan time.Time
		if pending {
			recheck = time.After(clusterRecheck)
		}
		select {
		case <-recheck:
			if rb, ok := st.(topicstore.ReadBarrier); ok {
				err := rb.Sync(ctx)
				if ctx.Err() != nil {
					return nil, pgerror.New(pgerror.CodeQueryCanceled, "canceling statement due to user request")
				}
				if errors.Is(err, topicstore.ErrUnavailable) && settleTimer != nil && !settled && time.Since(settleFrom) < clusterSettleMax {
					// The store has no leader to say what was released
					// (an election): that is no answer yet, so the wait
					// for one goes on (a delay, not an empty read).
					settleTimer.Reset(clusterSettle)
				}
			}
		case <-changed:
		case <-regrouped:
		case <-members:
		case <-deadline:
			deadline = nil // one last look, then return what there is
		case <-settle:
			settled = true
		case <-handoff:
			handedOff = true // one last look, then return what there is
		case <-ctx.Done():
			return nil, pgerror.New(pgerror.CodeQueryCanceled, "canceling statement due to user request")
		}
	}
}

func hasConsumer(ti topicstore.TopicInfo, name string) bool {
	for _, c := range ti.Config.Consumers {
		if c.Name == name {
			return true
		}
	}
	return false
}

// readHeld reads from the held partitions with fair per-partition quotas:
// first up to ceil(limit/P) from each, then what is left of the limit from
// those that had more.
func (rd *Reader) readHeld(ctx context.Context, ec *rowexec.EvalCtx, n *plantree.ConsumerReadNode, held []int32, o readOpts) (readRows, []partRead, error) {
	rows := readRows{enc: o.enc}
	cr := n.Read
	var parts []int32
	for _, id := range held {
		if o.partitions == nil || o.partitions[id] {
			parts = append(parts, id)
		}
	}
	if len(parts) == 0 || o.limit == 0 {
		return rows, nil, nil
	}
	positions, err := rd.cfg.Store.Positions(cr.Topic, cr.Consumer)
	if err != nil {
		return rows, nil, txn.StoreError(err, cr.Topic)
	}
	var skipTo map[int32]int64
	if !o.skipBefore.IsZero() {
		if skipTo, err = rd.cfg.Store.OffsetForTime(cr.Topic, o.skipBefore); err != nil {
			return rows, nil, txn.StoreError(err, cr.Topic)
		}
	}
	reads := make([]partRead, len(parts))
	tx := rd.cfg.Conn.Current()
	for i, id := range parts {
		k := txn.ReadKey{Topic: cr.Topic, Consumer: cr.Consumer, Partition: id}
		committed := positions[id]
		next := committed
		if tx != nil {
			if pos, ok := tx.ReadPos(k); ok {
				next = pos
			}
		} else if pos, ok := rd.deliver.readFrom(k); ok {
			next = pos
		}
		if t, ok := skipTo[id]; ok && t > next {
			next = t
		}
		reads[i] = partRead{key: k, expect: committed, next: next}
		if tx != nil {
			reads[i].bytes = tx.InFlight(k)
		}
	}
	var total int64
	remaining := o.limit
	more := make([]bool, len(parts))
	for round := 0; round < 2 && remaining != 0; round++ {
		quota := int64(-1)
		if o.limit > 0 && round == 0 {
			quota = (o.limit + int64(len(parts)) - 1) / int64(len(parts))
		}
		for i := range reads {
			if remaining == 0 || (round == 1 && !more[i]) {
				continue
			}
			q := quota
			if q < 0 || (remaining > 0 && remaining < q) {
				q = remaining
			}
			got, full, err := rd.readPartition(ctx, ec, n, &reads[i], q, o, &total, &rows)
			if err != nil {
				return rows, nil, err
			}
			more[i] = full
			if remaining > 0 {
				remaining -= got
			}
			if o.maxBytes > 0 && total >= o.maxBytes {
				return rows, reads, nil
			}
		}
	}
	return rows, reads, nil
}

// readPartition appends up to q (-1 = no limit) matching messages of one
// partition to rows, advancing r.next past everything it looked at. full
// reports that it stopped because of q (the partition may have more).
func (rd *Reader) readPartition(ctx context.Context, ec *rowexec.EvalCtx, node *plantree.ConsumerReadNode, r *partRead, q int64, o readOpts, total *int64, rows *readRows) (int64, bool, error) {
	if o.maxInFlight > 0 && r.bytes >= o.maxInFlight {
		return 0, false, nil
	}
	var n int64
	full := false
	var cbErr error
	bytes0 := r.bytes
	defer func() { rd.noteRead(r.key.Topic, n, r.bytes-bytes0) }()
	mr := &rowexec.MsgRow{Arena: &rd.arena}
	var slab []any
	sr := topicstore.ScanRange{Partition: r.key.Partition, Start: r.next, End: -1}
	bounded := q >= 0 && node.Filter == nil
	if bounded {
		// Without a filter every message is a row, so the quota's
		// messages are the next q offsets (a partition's offsets have no
		// gaps). The store stops at them instead of being asked for
		// message q+1 only to be told to stop: when q ended a record
		// batch, that question cost a seek into the next batch (half of
		// a read-process-write job's scans were such seeks).
		sr.End = r.next + q
	}
	err := rd.cfg.Store.Scan(ctx, r.key.Topic, sr, func(m *topicstore.Message) bool {
		if q >= 0 && n >= q {
			full = true
			return false
		}
		if o.maxBytes > 0 && *total >= o.maxBytes && rows.len() > 0 {
			return false
		}
		if o.maxInFlight > 0 && r.bytes >= o.maxInFlight {
			return false
		}
		r.next = m.Offset + 1
		if o.enc != nil { // no filter: every message is a row
			if err := encodeMsg(o.enc, o.cols, m); err != nil {
				cbErr = err
				return false
			}
			size := int64(len(m.Body))
			*total += size
			r.bytes += size
			n++
			return true
		}
		mr.Reset(m)
		if node.Filter != nil {
			ok, err := ec.Eval(node.Filter, mr)
			if err != nil {
				cbErr = err
				return false
			}
			if ok != true {
				return true
			}
		}
		w := len(node.Project)
		if len(slab) < w {
			slab = make([]any, w*128)
		}
		out := slab[:w:w]
		slab = slab[w:]
		for i, e := range node.Project {
			v, err := ec.Eval(e, mr)
			if err != nil {
				cbErr = err
				return false
			}
			out[i] = v
		}
		rows.rows = append(rows.rows, out)
		size := int64(len(m.Body))
		*total += size
		r.bytes += size
		n++
		return true
	})
	if cbErr != nil {
		return 0, false, cbErr
	}
	if err != nil {
		return 0, false, txn.StoreError(err, r.key.Topic)
	}
	if bounded && n == q {
		full = true // the partition may have more
	}
	return n, full, nil
}

// commitReads moves the positions: at COMMIT inside a transaction block;
// in autocommit once the statement's rows reached the client (delivery.go),
// or now when no rows are returned to it.
func (rd *Reader) commitReads(ctx context.Context, reads []partRead) error {
	if rd.cfg.Conn.Current() == nil && rd.deliver != nil {
		for _, r := range reads {
			rd.deliver.record(r)
		}
		return nil
	}
	_, err := rd.cfg.Conn.Statement(ctx, func(tx *txn.Txn) error {
		recordReads(tx, reads)
		return nil
	})
	return err
}

// recordReads notes reads in tx: each moves its partition's position, at
// commit, from where the read found it to where it stopped, only if
// nobody moved it since.
func recordReads(tx *txn.Txn, reads []partRead) {
	for _, r := range reads {
		tx.RecordRead(r.key, r.expect, r.next, r.bytes-tx.InFlight(r.key))
	}
}

// maxReadRetries bounds how often an autocommit read re-reads after its
// position commit conflicted with a rebalance.
const maxReadRetries = 16

// peekHeld returns, moving nothing, the partitions a read as cr would read
// now in this session (its held ones, or its share were it to join) and
// where each read would start (the transaction's read position, else the
// committed one), for EXPLAIN.
func (rd *Reader) peekHeld(cr *plantree.ConsumerRead) ([]int32, map[int32]int64, error) {
	st := rd.cfg.Store
	ti, err := st.Topic(cr.Topic)
	if err != nil {
		return nil, nil, txn.StoreError(err, cr.Topic)
	}
	if !hasConsumer(ti, cr.Consumer) {
		return nil, nil, pgerror.Newf(pgerror.CodeUndefinedObject, "consumer \"%s\" does not exist in topic \"%s\"", cr.Consumer, cr.Topic)
	}
	positions, err := st.Positions(cr.Topic, cr.Consumer)
	if err != nil {
		return nil, nil, txn.StoreError(err, cr.Topic)
	}
	parts, _, err := readable(ti, func() (map[int32]int64, error) { return positions, nil })
	if err != nil {
		return nil, nil, txn.StoreError(err, cr.Topic)
	}
	held := rd.cfg.Groups.Get(cr.Topic, cr.Consumer).wouldHold(rd.cfg.PID, parts)
	start := map[int32]int64{}
	tx := rd.cfg.Conn.Current()
	for _, id := range held {
		start[id] = positions[id]
		if tx != nil {
			if pos, ok := tx.ReadPos(txn.ReadKey{Topic: cr.Topic, Consumer: cr.Consumer, Partition: id}); ok {
				start[id] = pos
			}
		}
	}
	return held, start, nil
}

// ExplainProps are what EXPLAIN asks the session about a consumer read
// (analyzing: EXPLAIN ANALYZE): for a streaming consumer's, the
// partitions this session would read and their start positions, found
// without joining the read session (peekHeld).
func (rd *Reader) ExplainProps(n *plantree.ConsumerReadNode, analyzing bool) []plantree.Prop {
	cr := n.Read
	if cr.Shared {
		p := plantree.Prop{Key: "Acquires", Value: "available messages, each locked for the processing timeout"}
		if analyzing {
			p.Value = "nothing under EXPLAIN ANALYZE (it locks no message)"
		}
		return []plantree.Prop{p}
	}
	held, start, err := rd.peekHeld(cr)
	if err != nil {
		return []plantree.Prop{{Key: "Session Holds", Value: "unknown: " + err.Error()}}
	}
	if len(held) == 0 {
		return []plantree.Prop{{Key: "Session Holds", Value: "no partition"}}
	}
	slices.Sort(held)
	parts := make([]string, len(held))
	for i, id := range held {
		parts[i] = fmt.Sprintf("%d from offset %d", id, start[id])
	}
	return []plantree.Prop{{Key: "Session Holds", Value: strings.Join(parts, ", ")}}
}

// analyze is a read as a consumer under EXPLAIN ANALYZE: it reads what
// the read would return from the partitions it would hold, without
// waiting, joining the read session, moving the position or (a shared
// consumer) locking anything: a shared read returns no rows.
func (rd *Reader) analyze(ctx context.Context, ec *rowexec.EvalCtx, n *plantree.ConsumerReadNode) (rowexec.Iter, error) {
	if n.Read.Shared {
		return rowexec.Rows(nil), nil
	}
	o, err := rd.readOptions(ec, n)
	if err != nil {
		return nil, err
	}
	held, _, err := rd.peekHeld(n.Read)
	if err != nil {
		return nil, err
	}
	rows, _, err := rd.readHeld(ctx, ec, n, held, o)
	if err != nil {
		return nil, err
	}
	return rows.iter(), nil
}
