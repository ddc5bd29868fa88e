package consume

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"topicgate/planner/plantree"
	"topicgate/rowexec"
	"topicgate/sql/pgerror"
	"topicgate/sql/values"
	"topicgate/topicstore"
	"topicgate/txn"
	"topicgate/wire"
)

// sharedKey names a shared consumer of a topic.
type sharedKey = txn.SharedKey

// defaultSharedLimit is how many messages a shared read without LIMIT
// acquires.
const defaultSharedLimit = 1000

// readShared acquires up to LIMIT available messages under a lock.
func (rd *Reader) readShared(ctx context.Context, ec *rowexec.EvalCtx, n *plantree.ConsumerReadNode, direct func() *wire.RowEncoder) (rowexec.Iter, error) {
	cr := n.Read
	if n.Filter != nil {
		// Every message acquired is locked and returned: the planner
		// refuses WHERE with a shared consumer (checkConsumerRead).
		return nil, pgerror.AssertionFailed("a read as shared consumer \"%s\" with a filter", cr.Consumer)
	}
	o, err := rd.readOptions(ec, n)
	if err != nil {
		return nil, err
	}
	if o.partitions != nil || !o.skipBefore.IsZero() || o.maxInFlight > 0 {
		return nil, pgerror.New(pgerror.CodeFeatureNotSupported, "PARTITIONS, READ_FROM, MAX_LAG and PARTITION_MAX_IN_FLIGHT_BYTES apply to streaming consumers only")
	}
	var timeout time.Duration
	if cr.ProcessingTimeout != nil {
		v, err := ec.Eval(cr.ProcessingTimeout, nil)
		if err != nil {
			return nil, err
		}
		if d, ok := v.(time.Duration); ok {
			if d <= 0 {
				return nil, pgerror.Newf(pgerror.CodeInvalidParameterValue, "read option \"processing_timeout\" must be positive, got %s", values.FormatInterval(d))
			}
			timeout = d
		}
	}
	max := o.limit
	if max < 0 {
		max = defaultSharedLimit
	}
	if max == 0 {
		return rowexec.Rows(nil), nil
	}
	k := sharedKey{Topic: cr.Topic, Consumer: cr.Consumer}
	rd.cfg.Conn.Acquiring(k) // the session's close releases what it still holds
	var deadline <-chan time.Time
	if o.wait > 0 {
		timer := time.NewTimer(o.wait)
		defer timer.Stop()
		deadline = timer.C
	}
	// No polling: with WAIT, a try that finds nothing waits for a publish,
	// for a message of the consumer to be freed (release, ack of an
	// ordered group, ...), or for the store's next lock deadline or end of
	// a delay, then tries again.
	for {
		res, err := rd.cfg.Store.AcquireAsync(ctx, topicstore.AcquireRequest{Topic: cr.Topic, Consumer: cr.Consumer,
			Session: rd.cfg.PID, Max: int(max), Timeout: timeout, MaxBytes: o.maxBytes, Watch: deadline != nil})
		if err != nil {
			return nil, txn.StoreError(err, cr.Topic)
		}
		acq := res.Messages
		if len(acq) > 0 || deadline == nil {
			// The delivery counts are durable before any row leaves
			// (WaitDurable), so a crash cannot undo a delivery's count; the
			// fsync is shared with the session's other pending work.
			rd.pendingDurable = append(rd.pendingDurable, res.Wait)
			rows, err := rd.sharedRows(ec, n, acq, direct)
			if err != nil {
				refs := make([]topicstore.MsgRef, len(acq))
				for i, a := range acq {
					refs[i] = topicstore.MsgRef{Partition: a.Message.Partition, Offset: a.Message.Offset}
				}
				rd.cfg.Conn.Release(k, refs, len(refs))
				return nil, err
			}
			if len(acq) > 0 && (rd.cfg.Conn.Current() != nil || rd.deliver != nil) {
				refs := make([]topicstore.MsgRef, len(acq))
				for i, a := range acq {
					refs[i] = topicstore.MsgRef{Partition: a.Message.Partition, Offset: a.Message.Offset}
				}
				rd.cfg.Conn.Hold(k, refs) // in an explicit block, COMMIT acknowledges them
				if rd.deliver != nil {
					rd.deliver.acquired = append(rd.deliver.acquired, sharedAcquired{k, refs})
				}
			}
			return rows, nil
		}
		if err := res.Wait(); err != nil {
			return nil, txn.StoreError(err, cr.Topic)
		}
		var ready <-chan time.Time
		var timer *time.Timer
		if res.NextReady > 0 {
			timer = time.NewTimer(res.NextReady)
			ready = timer.C
		}
		canceled := false
		select {
		case <-res.Published:
		case <-res.Freed:
		case <-ready:
		case <-deadline:
			deadline = nil
		case <-ctx.Done():
			canceled = true
		}
		if timer != nil {
			timer.Stop()
		}
		if canceled {
			return nil, pgerror.New(pgerror.CodeQueryCanceled, "canceling statement due to user request")
		}
	}
}

// sharedRows projects the acquired messages, every one a row: encoded
// straight into direct's encoder when it offers one and every column is a
// bare message column (direct.go), as a streaming read's are. The rows
// leave only after the delivery counts are durable either way: the
// session's output waits for them (WaitDurable).
func (rd *Reader) sharedRows(ec *rowexec.EvalCtx, n *plantree.ConsumerReadNode, acq []topicstore.Acquired, direct func() *wire.RowEncoder) (rowexec.Iter, error) {
	var nb int64
	for i := range acq {
		nb += int64(len(acq[i].Message.Body))
	}
	rd.noteRead(n.Read.Topic, int64(len(acq)), nb)
	if direct != nil {
		if cols := directCols(n); cols != nil {
			enc := direct()
			enc.Reset()
			for i := range acq {
				if err := encodeMsg(enc, cols, &acq[i].Message); err != nil {
					return nil, err
				}
			}
			return &encodedIter{enc: enc}, nil
		}
	}
	rows := make([][]any, 0, len(acq))
	mr := &rowexec.MsgRow{}
	for i := range acq {
		mr.Reset(&acq[i].Message)
		mr.Acquired = &acq[i]
		out := make([]any, len(n.Project))
		for j, e := range n.Project {
			v, err := ec.Eval(e, mr)
			if err != nil {
				return nil, err
			}
			out[j] = v
		}
		rows = append(rows, out)
	}
	return rowexec.Rows(rows), nil
}

// SharedAction runs an ack (DELETE), release, reject or extend (UPDATE)
// on messages this session holds, and returns the command tag.
func (rd *Reader) SharedAction(ctx context.Context, ec *rowexec.EvalCtx, p *plantree.SharedActionPlan, out wire.Output) (string, error) {
	verb := "UPDATE"
	if p.Action == topicstore.ActionAck {
		verb = "DELETE"
	}
	parts, err := partitionCount(rd.cfg.Store, p.Topic)
	if err != nil {
		return "", txn.StoreError(err, p.Topic)
	}
	refs, err := evalRefs(ec, p.Refs, p.Topic, parts)
	if err != nil {
		return "", err
	}
	k := sharedKey{Topic: p.Topic, Consumer: p.Consumer}
	inTx := 0
	if rd.cfg.Conn.Current() != nil && p.Action == topicstore.ActionAck {
		// What this block acquired is acknowledged at COMMIT anyway,
		// atomically with the transaction; anything else named (held since
		// before the block, or not held at all) is acted on now, with the
		// usual per-message outcomes.
		rest := refs[:0:0]
		for _, r := range refs {
			if rd.cfg.Conn.Holds(k, r) {
				inTx++
			} else {
				rest = append(rest, r)
			}
		}
		if len(rest) == 0 {
			return fmt.Sprintf("%s %d", verb, inTx), nil
		}
		refs = rest
	}
	req := topicstore.SharedActionRequest{Topic: p.Topic, Consumer: p.Consumer, Session: rd.cfg.PID, Action: p.Action, Refs: refs}
	if p.Action == topicstore.ActionExtend {
		v, err := ec.Eval(p.Until, nil)
		if err != nil {
			return "", err
		}
		t, ok := v.(time.Time)
		if !ok {
			return "", pgerror.New(pgerror.CodeNullValueNotAllowed, "locked_until must not be NULL when extending")
		}
		req.Until = t
	}
	// The outcomes are decided now; their durability is awaited before any
	// output leaves for the client (WaitDurable), so a pipeline of acks
	// shares one fsync wait.
	outcomes, wait, err := rd.cfg.Store.SharedActionAsync(ctx, req)
	if err != nil {
		return "", txn.StoreError(err, p.Topic)
	}
	rd.pendingDurable = append(rd.pendingDurable, wait)
	if p.Action != topicstore.ActionExtend && p.Action != topicstore.ActionAck {
		rd.cfg.Conn.Unhold(k, refs)
	}
	done := reportOutcomes(out, verb, refs, outcomes)
	return verb + " " + strconv.Itoa(done+inTx), nil
}

// reportOutcomes counts the messages acted on and sends one NOTICE per kind
// of failure, naming the first few messages.
func reportOutcomes(out wire.Output, verb string, refs []topicstore.MsgRef, outcomes []topicstore.SharedOutcome) int {
	done := 0
	var failed map[topicstore.SharedOutcome][]string // made for the first failure
	for i, o := range outcomes {
		if o == topicstore.OutcomeDone {
			done++
			continue
		}
		if failed == nil {
			failed = map[topicstore.SharedOutcome][]string{}
		}
		failed[o] = append(failed[o], fmt.Sprintf("%d:%d", refs[i].Partition, refs[i].Offset))
	}
	if failed == nil {
		return done
	}
	for _, o := range []topicstore.SharedOutcome{topicstore.OutcomeExpired, topicstore.OutcomeNotHeld, topicstore.OutcomeFinished, topicstore.OutcomeUnknown} {
		if ms := failed[o]; len(ms) > 0 {
			shown := ms
			if len(shown) > 10 {
				shown = append(shown[:10:10], "...")
			}
			out.Notice(pgerror.CodeWarning, fmt.Sprintf("%s skipped %d message(s), %s: %s", verb, len(ms), outcomeWhy[o], strings.Join(shown, ", ")))
		}
	}
	return done
}

// outcomeWhy says why an action skipped a message, by outcome.
var outcomeWhy = map[topicstore.SharedOutcome]string{
	topicstore.OutcomeNotHeld:  "not held by this session (never acquired, or held by another session)",
	topicstore.OutcomeExpired:  "lock expired; the message went back to the queue",
	topicstore.OutcomeFinished: "already acknowledged or archived",
	topicstore.OutcomeUnknown:  "no such message",
}

// partitionCount is how many partitions topic has, without gathering
// their state when the store can tell (topicstore.PartitionCounter): an
// acknowledgement checks its partitions on every execution.
func partitionCount(s topicstore.Store, topic string) (int, error) {
	if pc, ok := s.(topicstore.PartitionCounter); ok {
		return pc.PartitionCount(topic)
	}
	ti, err := s.Topic(topic)
	return len(ti.Partitions), err
}

// evalRefs evaluates an action's message references against topic's
// parts partitions.
func evalRefs(ec *rowexec.EvalCtx, groups []plantree.RefGroup, topic string, parts int) ([]topicstore.MsgRef, error) {
	var refs []topicstore.MsgRef
	var seen map[topicstore.MsgRef]bool // once refs outgrow a linear search
	add := func(part int64, v any) error {
		off, ok := v.(int64)
		if !ok {
			return pgerror.New(pgerror.CodeNullValueNotAllowed, "offset must not be NULL")
		}
		r := topicstore.MsgRef{Partition: int32(part), Offset: off}
		switch {
		case seen == nil && len(refs) < 16:
			if slices.Contains(refs, r) {
				return nil
			}
		case seen == nil:
			seen = make(map[topicstore.MsgRef]bool, 2*len(refs))
			for _, x := range refs {
				seen[x] = true
			}
			fallthrough
		default:
			if seen[r] {
				return nil
			}
			seen[r] = true
		}
		refs = append(refs, r)
		return nil
	}
	for _, g := range groups {
		pv, err := ec.Eval(g.Partition, nil)
		if err != nil {
			return nil, err
		}
		part, ok := pv.(int64)
		if !ok || part < 0 || int(part) >= parts {
			return nil, pgerror.Newf(pgerror.CodeInvalidParameterValue, "partition %v does not exist in topic \"%s\"", pv, topic)
		}
		for _, e := range g.Offsets {
			v, err := ec.Eval(e, nil)
			if err != nil {
				return nil, err
			}
			if err := add(part, v); err != nil {
				return nil, err
			}
		}
		if g.OffsetArray != nil {
			v, err := ec.Eval(g.OffsetArray, nil)
			if err != nil {
				return nil, err
			}
			arr, _ := v.([]int64)
			refs = slices.Grow(refs, len(arr))
			for _, off := range arr {
				if err := add(part, off); err != nil {
					return nil, err
				}
			}
		}
	}
	return refs, nil
}
