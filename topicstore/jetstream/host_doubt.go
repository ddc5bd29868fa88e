package jetstream

import (
	"time"

	"topicgate/topicstore/jetstream/chain"
)

// What the chain (jetstream/chain: resolving and settling batches in
// doubt) needs of the store beyond what host.go and host_catalog.go give
// the other rooms: the clock that deadlines are measured by, the
// committer's back-off, and the settling of stagings whose batch the
// fold decided.

var _ chain.Host = host{}

func (h host) Now() time.Time { return h.s.io.now() }

func (h host) Backoff(attempt int) { h.s.backoff(attempt) }

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
