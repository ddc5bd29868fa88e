package executor

import (
	"context"
	"fmt"
	"time"

	"topicgate/metrics"
	"topicgate/planner/plantree"
	"topicgate/topicstore"
	"topicgate/txn"
	"topicgate/wire"
)

// Pipelines. In the extended protocol PostgreSQL runs every statement up
// to Sync in one implicit transaction: the INSERTs of a pgx Batch, a
// psycopg pipeline or a JDBC executeBatch are applied together at Sync,
// or not at all when one of the statements fails. topicgate does the
// same, with the implicit block of a multi-statement query (block.go),
// which the pipeline opens lazily:
//
//   - An INSERT executed while no block is open is deferred (wire.Pipeliner):
//     its messages are built and checked, and the Execute's CommandComplete
//     waits for the client's next message. When that is Sync the INSERT
//     commits on its own, as an autocommit statement: the common
//     Bind/Execute/Sync takes the write route (insert.go) as an autocommit
//     INSERT does, with a tag that counts the messages written after dedup. When another message comes
//     first, the INSERT's messages are staged in a new implicit block that
//     the rest of the pipeline runs in, committed at Sync if every
//     statement succeeded, rolled back otherwise; its tag, like any INSERT's
//     in a block, counts the messages staged (duplicates are reported at
//     commit, as NOTICEs).
//   - Once the block is open the pipeline's statements run in it as in a
//     multi-statement query: INSERTs stage, consumer reads' positions move
//     at Sync (after their rows were flushed), DDL commits the block first.
//   - A statement before the pipeline's first INSERT runs as in autocommit:
//     a consumer read settles when its rows reach the client
//     (consume.Delivery) and is not undone by a later error in the
//     pipeline; shared-consumer acknowledgements act at once, in a block
//     or not.
//   - INSERT ... SELECT from a consumer is its own transaction, committed
//     at the statement, when no block is open.

// deferredWrite is the INSERT whose completion waits for the pipeline's
// next message.
type deferredWrite struct {
	topic string
	msgs  []topicstore.Message
}

// Pipelined implements wire.Pipeliner: the statement about to run came in
// an Execute message.
func (s *Session) Pipelined() { s.pipe = true }

// defers reports whether an INSERT waits for the pipeline's next message.
func (s *Session) defers(plan *plantree.InsertPlan) bool {
	return s.pipe && s.txc.Block() == nil && !s.multi && (plan.Select == nil || plan.Select.Consumer == nil)
}

// DeferredTag implements wire.Pipeliner: the deferred INSERT (execInsert
// built its messages) finishes the write route, committed on its own as
// an autocommit statement (atSync) or staged in the pipeline's implicit
// block, which it opens.
func (s *Session) DeferredTag(ctx context.Context, out wire.Output, atSync bool) (tag string, err error) {
	d := s.deferred
	s.deferred = nil
	if s.auditDeferred != nil {
		defer func() { s.auditDeferredEnd(tag, err) }()
	}
	if d == nil {
		return "", nil
	}
	if !atSync {
		s.multi = true
		s.beginBlock(txn.ImplicitBlock)
		defer s.publishStatus()
	}
	// Committed (atSync) or staged, the INSERT is still its statement's:
	// statement_timeout bounds it as it bounds an autocommit INSERT's.
	err = s.inStatement(ctx, func(ctx context.Context) error {
		n, err := s.insertBuilt(ctx, out, d.topic, d.msgs)
		if err == nil {
			tag = fmt.Sprintf("INSERT 0 %d", n)
		}
		return err
	})
	s.eng.metrics.Observe(metrics.KindInsert, time.Since(s.deferStart)) // its latency ends here
	s.deferStart = time.Time{}
	return tag, err
}
