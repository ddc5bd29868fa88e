package jetstream

import (
	"time"

	"github.com/nats-io/nats.go"

	"topicgate/topicstore/jetstream/chain"
	"topicgate/topicstore/jetstream/plan"
	"topicgate/topicstore/jetstream/wide"
)

// What the chain (jetstream/chain: resolving and settling batches in
// doubt) and wide transactions (jetstream/wide) need of the store beyond
// what host.go and host_catalog.go give the other rooms: the clock that
// deadlines are measured by, the committer's back-off and batch limit,
// and the settling of stagings whose batch the fold decided; and
// wideCommit, the commit protocol's part of a wide transaction.

var _ chain.Host = host{}

func (h host) Now() time.Time { return h.s.io.now() }

func (h host) Backoff(attempt int) { h.s.backoff(attempt) }

func (h host) BatchLimit() int { return h.s.batchLimit() }

func (h host) SettleStagings(txns []uint64, committed bool) {
	if committed {
		h.s.stage.settle(txns, stagingCommitted)
		return
	}
	h.s.stage.settle(txns, stagingOpen)
	for _, txn := range txns {
		_ = h.s.DiscardStaged(txn)
	}
}

// wideCommit is the commit protocol's part of a wide transaction
// (wide.Commit).
type wideCommit struct{ s *Store }

var _ wide.Commit = wideCommit{}

func (c wideCommit) Stored(last uint64, msgs []*nats.Msg) {
	c.s.waitStored(last, msgs)
	c.s.cacheRecords(last, msgs)
}

func (c wideCommit) Finish(p *plan.Batch, last uint64, msgs []*nats.Msg) { c.s.finish(p, last, msgs) }

// Committed answers the one request of p: its decision was stored after
// all, and the fold applied it.
func (c wideCommit) Committed(p *plan.Batch) {
	s := c.s
	s.commitGroups.Add(1)
	s.commitRequests.Add(1)
	s.throttle(p)
	p.Settle(nil)
	s.catalog.AutoSplit(p.Wrote)
}
