package executor

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
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

// msgBuilder turns column values into a topicstore.Message.
type msgBuilder struct {
	topic string
	cols  []plantree.MsgCol
	now   time.Time
}

// build fills m from vals (one per column, already of the column's type or
// convertible to it). A NULL data is a Kafka null value (a tombstone,
// NullBody) when the message has a key, and 23502 otherwise: a message
// without a key needs a body, as it did before Kafka records (issue 28).
func (b *msgBuilder) build(m *topicstore.Message, vals []any, types []values.Type) error {
	*m = topicstore.Message{Partition: -1, Codec: topicstore.CodecRaw, CreatedAt: b.now}
	nullData := false
	for i, c := range b.cols {
		v := vals[i]
		col := plantree.MsgColumns[c]
		if v != nil && types != nil && types[i] != col.Type {
			cv, err := values.Convert(v, types[i], col.Type)
			if err != nil {
				return err
			}
			v = cv
		}
		if v == nil {
			nullData = nullData || c == plantree.ColData
			continue
		}
		if err := setMsgCol(m, c, v); err != nil {
			return err
		}
	}
	if nullData {
		if m.Key == nil {
			return pgerror.Newf(pgerror.CodeNotNullViolation, "null value in column \"data\" of topic \"%s\" violates not-null constraint", b.topic).
				WithHint("Only a message with a key may have a null data (a Kafka tombstone).")
		}
		m.NullBody = true
	}
	if m.HasSeqNo && m.ProducerID == "" {
		return pgerror.Newf(pgerror.CodeInvalidParameterValue, "seqno %d given without producer_id: deduplication needs both", m.SeqNo)
	}
	if n := m.Size(); n > topicstore.MaxMessageSize {
		return pgerror.Newf(pgerror.CodeProgramLimitExceeded, "message of %d bytes is larger than the limit of %d bytes (topic \"%s\")", n, topicstore.MaxMessageSize, b.topic)
	}
	return nil
}

func setMsgCol(m *topicstore.Message, c plantree.MsgCol, v any) error {
	switch c {
	case plantree.ColPartition:
		n := v.(int64)
		if n < 0 || n > math.MaxInt32 {
			return pgerror.Newf(pgerror.CodeInvalidParameterValue, "partition %d is out of range", n)
		}
		m.Partition = int32(n)
	case plantree.ColSeqNo:
		n := v.(int64)
		if n < 0 {
			return pgerror.Newf(pgerror.CodeInvalidParameterValue, "seqno %d must not be negative", n)
		}
		m.SeqNo, m.HasSeqNo = n, true
	case plantree.ColProducerID:
		m.ProducerID = v.(string)
		if len(m.ProducerID) > 2048 {
			return pgerror.New(pgerror.CodeProgramLimitExceeded, "producer_id is longer than 2048 bytes")
		}
	case plantree.ColMessageGroupID:
		m.MessageGroupID = v.(string)
	case plantree.ColCreatedAt:
		m.CreatedAt = v.(time.Time)
	case plantree.ColCodec:
		codec, err := topicstore.ParseCodec(strings.ToLower(v.(string)))
		if err != nil {
			return pgerror.Newf(pgerror.CodeInvalidParameterValue, "unknown codec \"%s\" (known: raw, gzip, lzop, zstd)", v)
		}
		m.Codec = codec
	case plantree.ColAttrs:
		attrs, err := parseAttrs(v.(string))
		if err != nil {
			return err
		}
		m.Attrs = attrs
	case plantree.ColData:
		m.Body = v.([]byte)
	case plantree.ColKey:
		m.Key = v.([]byte)
		if m.Key == nil {
			m.Key = []byte{}
		}
	case plantree.ColHeaders:
		hs, err := rowexec.ParseHeaders(v.(string))
		if err != nil {
			return err
		}
		m.Headers = hs
	case plantree.ColDelay:
		d := v.(time.Duration)
		if d < 0 {
			return pgerror.New(pgerror.CodeInvalidParameterValue, "delay must not be negative")
		}
		m.Delay = d
	}
	return nil
}

// parseAttrs accepts a JSON object whose values are strings: attributes
// are string to string, as YDB's message metadata and Kafka's headers
// (as text) are; any other value is 22023, naming its JSON type.
func parseAttrs(s string) ([]topicstore.Attr, error) {
	var obj map[string]any
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	if err := dec.Decode(&obj); err != nil || obj == nil {
		return nil, pgerror.Newf(pgerror.CodeInvalidParameterValue, "attrs must be a JSON object of string values, got %s", truncate(s, 64))
	}
	if len(obj) == 0 {
		return nil, nil
	}
	out := make([]topicstore.Attr, 0, len(obj))
	for k, v := range obj {
		val, ok := v.(string)
		if !ok {
			return nil, pgerror.Newf(pgerror.CodeInvalidParameterValue, "attribute \"%s\" must be a string, not %s", k, jsonKind(v))
		}
		out = append(out, topicstore.Attr{Key: k, Value: val})
	}
	return out, nil
}

// jsonKind names a decoded JSON value's type as an error message does.
func jsonKind(v any) string {
	switch x := v.(type) {
	case json.Number:
		return "a number (" + truncate(x.String(), 32) + ")"
	case bool:
		return fmt.Sprintf("a boolean (%t)", x)
	case nil:
		return "null"
	case []any:
		return "an array"
	default:
		return "an object"
	}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// The write route. Every INSERT and every COPY ... FROM STDIN, alone, in a
// block, in a pipeline or reading a consumer, takes the same steps:
//
//  1. its messages are built: an INSERT's VALUES or query rows
//     (insertMessages), COPY's rows (copy.go, copyio). An INSERT that
//     reads a consumer builds them inside its transaction, since the read
//     is part of it; any other INSERT before it, so that a build that
//     fails begins nothing;
//  2. a pipelined INSERT may stop here and finish at the client's next
//     message (pipeline.go), which then runs step 3 as an autocommit
//     statement (Sync) or in the pipeline's implicit block;
//  3. they are staged (stage) in the statement's transaction (inWriteTxn):
//     the open block's, or, in autocommit, one of the statement's own that
//     commits, through txn's one commit path, when the statement's work is
//     done (its tag then counts what the commit wrote, duplicates skipped).

// execInsert runs an INSERT and returns its tag: "INSERT 0 n", or
// wire.TagDeferred for a pipelined INSERT whose write waits for the
// client's next message (pipeline.go).
func (s *Session) execInsert(ctx context.Context, ec *rowexec.EvalCtx, plan *plantree.InsertPlan, out wire.Output) (string, error) {
	var n int
	var err error
	if plan.Select != nil && plan.Select.Consumer != nil {
		// Read-process-write: the read and the writes commit together.
		n, err = s.inWriteTxn(ctx, out, func(tx *txn.Txn, _ bool) (int, error) {
			msgs, err := s.insertMessages(ctx, ec, plan)
			if err != nil {
				return 0, err
			}
			return s.stage(tx, plan.Topic, msgs, false)
		})
	} else {
		var msgs []topicstore.Message
		if msgs, err = s.insertMessages(ctx, ec, plan); err != nil {
			return "", err
		}
		if s.defers(plan) {
			// The store checks the messages when they commit or stage, and
			// either failure is still this statement's error
			// (DeferredTag's).
			s.deferred = &deferredWrite{topic: plan.Topic, msgs: msgs}
			return wire.TagDeferred, nil
		}
		n, err = s.insertBuilt(ctx, out, plan.Topic, msgs)
	}
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("INSERT 0 %d", n), nil
}

// insertBuilt runs step 3 of the write route for an INSERT that
// reads no consumer: msgs go to topic in the statement's transaction.
func (s *Session) insertBuilt(ctx context.Context, out wire.Output, topic string, msgs []topicstore.Message) (int, error) {
	if len(msgs) == 0 {
		return 0, nil
	}
	return s.inWriteTxn(ctx, out, func(tx *txn.Txn, own bool) (int, error) { return s.stage(tx, topic, msgs, own) })
}

// insertMessages evaluates the messages an INSERT writes: its VALUES rows
// or its query's rows.
func (s *Session) insertMessages(ctx context.Context, ec *rowexec.EvalCtx, plan *plantree.InsertPlan) ([]topicstore.Message, error) {
	b := &msgBuilder{topic: plan.Topic, cols: plan.Cols, now: ec.Now()}
	var msgs []topicstore.Message
	if plan.Select != nil {
		it, err := rowexec.Run(ctx, ec, plan.Select, nil)
		if err != nil {
			return nil, err
		}
		types := make([]values.Type, len(plan.Select.Cols))
		for i, c := range plan.Select.Cols {
			types[i] = c.T
		}
		for {
			r, err := it.Next(ctx)
			if err != nil {
				return nil, err
			}
			if r == nil {
				break
			}
			msgs = append(msgs, topicstore.Message{})
			if err := b.build(&msgs[len(msgs)-1], r[:len(plan.Cols)], types); err != nil {
				return nil, err
			}
		}
	} else {
		msgs = make([]topicstore.Message, len(plan.Rows))
		vals := make([]any, len(plan.Cols))
		types := make([]values.Type, len(plan.Cols))
		for i, row := range plan.Rows {
			for j, e := range row {
				v, err := ec.Eval(e, nil)
				if err != nil {
					return nil, err
				}
				vals[j], types[j] = v, e.Type()
			}
			if err := b.build(&msgs[i], vals, types); err != nil {
				return nil, err
			}
		}
	}
	return msgs, nil
}

// inWriteTxn runs work, which stages a statement's writes (and, for
// INSERT ... SELECT from a consumer, records its read), in the statement's
// transaction: the open block's (own false), where they commit with the
// block and the count is work's; or, in autocommit, a transaction of the
// statement's own (own true), committed when work returns nil and rolled
// back when it fails, so a COPY or a read-process-write INSERT publishes
// its writes and moves the consumer's position in one atomic commit. The
// count is then what the commit wrote, duplicates skipped.
func (s *Session) inWriteTxn(ctx context.Context, out wire.Output, work func(tx *txn.Txn, own bool) (int, error)) (int, error) {
	if tx := s.txc.Current(); tx != nil {
		return work(tx, false)
	}
	res, err := s.txc.Statement(ctx, func(tx *txn.Txn) error {
		_, err := work(tx, true)
		return err
	})
	if err != nil {
		return 0, err
	}
	s.afterCommit(ctx, out, &res)
	written := 0
	for _, w := range res.Writes {
		written += w.Written
	}
	return written, nil
}

// stage stages msgs for topic in tx and returns how many of them the
// statement's tag counts in a block (Admit: what dedup will keep).
// Staging checks first what the commit would otherwise refuse for the
// whole transaction: a partition the topic lacks is the statement's
// error, as in autocommit (found at COMMIT it would fail the transaction
// as a conflict, 40001, that no retry can cure), and so is a producer
// bound to another partition. Only an autocommit INSERT's messages staged
// alone in its own transaction skip both: its commit comes next and its
// refusal is the statement's error as is, and its tag counts what that
// commit wrote.
func (s *Session) stage(tx *txn.Txn, topic string, msgs []topicstore.Message, alone bool) (int, error) {
	if len(msgs) == 0 {
		return 0, nil
	}
	if alone {
		return 0, tx.Stage(topic, msgs)
	}
	if err := s.checkPartitions(topic, msgs); err != nil {
		return 0, err
	}
	n, err := tx.Admit(topic, msgs, s.eng.store.Producer)
	if err != nil {
		return 0, txn.StoreError(err, topic)
	}
	if err := tx.Stage(topic, msgs); err != nil {
		return 0, err
	}
	return n, nil
}

// checkPartitions fails with the statement's error when a message names
// a partition the topic lacks.
func (s *Session) checkPartitions(topic string, msgs []topicstore.Message) error {
	ti, err := s.eng.store.Topic(topic)
	if err != nil {
		return txn.StoreError(err, topic)
	}
	for i := range msgs {
		if p := msgs[i].Partition; int(p) >= len(ti.Partitions) {
			return txn.StoreError(fmt.Errorf("%w: topic %q partition %d", topicstore.ErrPartitionNotFound, topic, p), topic)
		}
	}
	return nil
}

func reportDuplicates(out wire.Output, res []topicstore.WriteResult) {
	dups := 0
	for _, w := range res {
		dups += w.Duplicates
	}
	if dups > 0 {
		out.Notice(pgerror.CodeSuccessfulCompletion, fmt.Sprintf("skipped %d duplicate message(s): seqno not above the producer's last stored seqno", dups))
	}
}
