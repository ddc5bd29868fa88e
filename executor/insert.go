package executor

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"topicgate/planner"
	"topicgate/sql/pgerror"
	"topicgate/sql/values"
	"topicgate/topicstore"
	"topicgate/txn"
	"topicgate/wire"
)

// msgBuilder turns column values into a topicstore.Message.
type msgBuilder struct {
	topic string
	cols  []planner.MsgCol
	now   time.Time
}

// build fills m from vals (one per column, already of the column's type or
// convertible to it).
func (b *msgBuilder) build(m *topicstore.Message, vals []any, types []values.Type) error {
	*m = topicstore.Message{Partition: -1, Codec: topicstore.CodecRaw, CreatedAt: b.now}
	for i, c := range b.cols {
		v := vals[i]
		col := planner.MsgColumns[c]
		if v != nil && types != nil && types[i] != col.Type {
			cv, err := values.Convert(v, types[i], col.Type)
			if err != nil {
				return err
			}
			v = cv
		}
		if v == nil {
			if c == planner.ColData {
				return pgerror.Newf(pgerror.CodeNotNullViolation, "null value in column \"data\" of topic \"%s\" violates not-null constraint", b.topic)
			}
			continue
		}
		if err := setMsgCol(m, c, v); err != nil {
			return err
		}
	}
	if m.HasSeqNo && m.ProducerID == "" {
		return pgerror.Newf(pgerror.CodeInvalidParameterValue, "seqno %d given without producer_id: deduplication needs both", m.SeqNo)
	}
	if len(m.Body) > topicstore.MaxMessageSize {
		return pgerror.Newf(pgerror.CodeProgramLimitExceeded, "message of %d bytes is larger than the limit of %d bytes (topic \"%s\")", len(m.Body), topicstore.MaxMessageSize, b.topic)
	}
	return nil
}

func setMsgCol(m *topicstore.Message, c planner.MsgCol, v any) error {
	switch c {
	case planner.ColPartition:
		n := v.(int64)
		if n < 0 || n > math.MaxInt32 {
			return pgerror.Newf(pgerror.CodeInvalidParameterValue, "partition %d is out of range", n)
		}
		m.Partition = int32(n)
	case planner.ColSeqNo:
		n := v.(int64)
		if n < 0 {
			return pgerror.Newf(pgerror.CodeInvalidParameterValue, "seqno %d must not be negative", n)
		}
		m.SeqNo, m.HasSeqNo = n, true
	case planner.ColProducerID:
		m.ProducerID = v.(string)
		if len(m.ProducerID) > 2048 {
			return pgerror.New(pgerror.CodeProgramLimitExceeded, "producer_id is longer than 2048 bytes")
		}
	case planner.ColMessageGroupID:
		m.MessageGroupID = v.(string)
	case planner.ColCreatedAt:
		m.CreatedAt = v.(time.Time)
	case planner.ColCodec:
		codec, err := topicstore.ParseCodec(strings.ToLower(v.(string)))
		if err != nil {
			return pgerror.Newf(pgerror.CodeInvalidParameterValue, "unknown codec \"%s\" (known: raw, gzip, lzop, zstd)", v)
		}
		m.Codec = codec
	case planner.ColAttrs:
		attrs, err := parseAttrs(v.(string))
		if err != nil {
			return err
		}
		m.Attrs = attrs
	case planner.ColData:
		m.Body = v.([]byte)
	case planner.ColDelay:
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

func (s *Session) execInsert(ctx context.Context, ec *evalCtx, plan *planner.InsertPlan, out wire.Output) (int, error) {
	if plan.Select != nil && plan.Select.Consumer != nil && s.txc.Current() == nil {
		// Streaming or shared: the read and the writes commit together.
		return s.implicitTxn(ctx, out, func() (int, error) { return s.execInsert(ctx, ec, plan, out) })
	}
	msgs, err := s.insertMessages(ctx, ec, plan)
	if err != nil {
		return 0, err
	}
	return s.write(ctx, plan.Topic, msgs, out)
}

// insertMessages evaluates the messages an INSERT writes: its VALUES rows
// or its query's rows.
func (s *Session) insertMessages(ctx context.Context, ec *evalCtx, plan *planner.InsertPlan) ([]topicstore.Message, error) {
	b := &msgBuilder{topic: plan.Topic, cols: plan.Cols, now: ec.now}
	var msgs []topicstore.Message
	if plan.Select != nil {
		it, err := s.runSelect(ctx, ec, plan.Select, nil)
		if err != nil {
			return nil, err
		}
		types := make([]values.Type, len(plan.Select.Cols))
		for i, c := range plan.Select.Cols {
			types[i] = c.T
		}
		for {
			r, err := it.next(ctx)
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
				v, err := ec.eval(e, nil)
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

// write publishes msgs (autocommit) or stages them (transaction block).
func (s *Session) write(ctx context.Context, topic string, msgs []topicstore.Message, out wire.Output) (int, error) {
	if !s.deferStart.IsZero() { // a deferred pipeline INSERT: its latency ends here
		start := s.deferStart
		s.deferStart = time.Time{}
		defer func() { s.eng.metrics.observe(kindInsert, time.Since(start)) }()
	}
	if len(msgs) == 0 {
		return 0, nil
	}
	if tx := s.txc.Current(); tx != nil {
		// A partition the topic lacks is the statement's error, as in
		// autocommit: found at COMMIT it would fail the whole transaction
		// as a conflict (40001) that no retry can cure.
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
	// Autocommit: the INSERT is a transaction of its own.
	res, err := s.txc.Statement(ctx, func(tx *txn.Txn) error { return tx.Stage(topic, msgs) })
	if err != nil {
		return 0, err
	}
	s.afterCommit(ctx, out, &res)
	return res.Writes[0].Written, nil
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

// implicitTxn runs fn as the implicit transaction of an autocommit
// statement, so a read-process-write INSERT ... SELECT ... WITH (CONSUMER =
// c), or a COPY, publishes its writes and moves the consumer's position in
// one atomic commit. It returns how many messages the commit wrote.
func (s *Session) implicitTxn(ctx context.Context, out wire.Output, fn func() (int, error)) (int, error) {
	res, err := s.txc.Statement(ctx, func(*txn.Txn) error {
		_, err := fn()
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
