package kafka

import (
	"context"
	"errors"
	"hash/fnv"
	"math"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"topicgate/kafka/kproducer"
	"topicgate/topicstore"
	"topicgate/txn"
)

// Transactional producers. A transactional id is registered in the store:
// its epoch is the seqno (epoch·2³²) of the producer "txn/<id>" of
// ProducerIDTopic, which InitProducerId raises, durably and on every
// gateway (the store's dedup makes two concurrent registrations of one
// epoch one winner). Its producer id is derived from the id (txnProducerID),
// so nothing else needs storing. An open transaction is a txn.Conn block
// in the memory of the gateway the producer talks to: Produce stages its
// batches there, TxnOffsetCommit its group's positions, and EndTxn commits
// them in one store commit fenced on the registration (a newer epoch
// registered anywhere fails it whole: PRODUCER_FENCED) or rolls them back.
// Nothing of a transaction is in a partition before its commit, so
// readers never wait on it and there are no control records.

// DefaultTxnTimeout bounds a transaction a producer asks no timeout for;
// MaxTxnTimeout bounds what it may ask (transaction.max.timeout.ms).
const (
	DefaultTxnTimeout = time.Minute
	MaxTxnTimeout     = 15 * time.Minute
)

// txnIdle is how long a transactional id with no open transaction stays
// in a gateway's memory (for EndTxn retries); a later request reloads it.
const txnIdle = 15 * time.Minute

// txnProducer is the registration producer of a transactional id.
func txnProducer(id string) string { return "txn/" + id }

// txnProducerID is the Kafka producer id of transactional id: bit 62 set
// (the counter's ids are far below it) and 62 bits of the id's FNV-1a
// hash, so every gateway derives the same id without a lookup.
func txnProducerID(id string) int64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(id))
	return 1<<62 | int64(h.Sum64()&(1<<62-1))
}

// txnState is one transactional id as this gateway knows it.
type txnState struct {
	mu    sync.Mutex
	id    string
	pid   int64
	epoch int16
	// open is the transaction under way (nil: none); parts and groups
	// are what it added, seqs the last sequence staged per partition.
	open    *txn.Conn
	parts   map[txnPart]bool
	groups  map[string]bool
	seqs    map[txnPart]int32
	timeout time.Duration
	timer   *time.Timer
	// txns counts the transactions begun: a timeout fires for the one it
	// was set for only (its Stop can lose the race with the firing).
	txns uint64
	// timedOut: the open transaction of this epoch was rolled back by
	// its timeout; requests of the epoch get INVALID_PRODUCER_EPOCH until
	// an abort acknowledges it.
	timedOut bool
	// ended is the last EndTxn's answer, for a retry of it.
	ended   bool
	endedOK bool // committed (true) or aborted
	used    time.Time
}

type txnPart struct {
	topic string
	part  int32
}

// txnTable is the gateway's transactional ids.
type txnTable struct {
	mu    sync.Mutex
	ids   map[string]*txnState
	swept time.Time // the last sweep of idle ids
}

// get returns id's state, creating it; every txnIdle/10 it drops the ids
// idle past txnIdle (a sweep of every id, so not on every request).
func (tt *txnTable) get(id string, now time.Time) *txnState {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	if tt.ids == nil {
		tt.ids = map[string]*txnState{}
	}
	if now.Sub(tt.swept) > txnIdle/10 {
		tt.swept = now
		for k, ts := range tt.ids {
			if k != id && ts.mu.TryLock() {
				if ts.open == nil && now.Sub(ts.used) > txnIdle {
					delete(tt.ids, k)
				}
				ts.mu.Unlock()
			}
		}
	}
	ts := tt.ids[id]
	if ts == nil {
		ts = &txnState{id: id, pid: txnProducerID(id), epoch: -1}
		tt.ids[id] = ts
	}
	return ts
}

// pendingGroup reports whether a transaction open here stages offsets of
// group (OffsetFetch's RequireStable answers UNSTABLE_OFFSET_COMMIT).
func (tt *txnTable) pendingGroup(group string) bool {
	tt.mu.Lock()
	states := make([]*txnState, 0, len(tt.ids))
	for _, ts := range tt.ids {
		states = append(states, ts)
	}
	tt.mu.Unlock()
	for _, ts := range states {
		ts.mu.Lock()
		pending := ts.open != nil && ts.groups[group]
		ts.mu.Unlock()
		if pending {
			return true
		}
	}
	return false
}

// closeAll rolls back every open transaction (the server closes).
func (tt *txnTable) closeAll() {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	for _, ts := range tt.ids {
		ts.mu.Lock()
		ts.rollback()
		ts.mu.Unlock()
	}
}

// rollback ends the open transaction, if any, discarding what it staged.
// ts.mu is held.
func (ts *txnState) rollback() {
	if ts.open != nil {
		ts.open.Rollback()
		ts.open = nil
	}
	if ts.timer != nil {
		ts.timer.Stop()
		ts.timer = nil
	}
	ts.parts, ts.groups, ts.seqs = nil, nil, nil
}

// errUnknownTxn: this gateway holds no transaction of the producer's
// epoch (it restarted, or the producer came from another gateway), so
// what the producer did before is not here: it must abort and take a new
// epoch (INVALID_PRODUCER_ID_MAPPING, which clients treat so).
var errUnknownTxn = refuse(kerr.InvalidProducerIDMapping, "this gateway has no transaction of the producer's epoch: abort and initialize the producer again")

// check checks a request of producer (pid, epoch) against ts; ts.mu is
// held. A state this gateway did not initialize is errUnknownTxn.
func (ts *txnState) check(pid int64, epoch int16) error {
	switch {
	case ts.epoch < 0 || pid != ts.pid:
		return errUnknownTxn
	case epoch < ts.epoch:
		return refuse(kerr.ProducerFenced, "transactional id %q: epoch %d is fenced by epoch %d", ts.id, epoch, ts.epoch)
	case epoch > ts.epoch:
		return errUnknownTxn
	case ts.timedOut:
		return refuse(kerr.InvalidProducerEpoch, "transactional id %q: the transaction timed out and was rolled back; abort it", ts.id)
	}
	return nil
}

// begin opens a transaction if none is (the first AddPartitionsToTxn or
// AddOffsetsToTxn of one); ts.mu is held.
func (ts *txnState) begin(s *Server) {
	if ts.open != nil {
		return
	}
	ts.open = s.cfg.Txns.Conn(0, nil)
	ts.open.Begin(txn.ExplicitBlock)
	ts.parts, ts.groups, ts.seqs = map[txnPart]bool{}, map[string]bool{}, map[txnPart]int32{}
	ts.ended = false
	ts.txns++
	epoch, n := ts.epoch, ts.txns
	ts.timer = time.AfterFunc(ts.timeout, func() {
		ts.mu.Lock()
		defer ts.mu.Unlock()
		if ts.epoch == epoch && ts.txns == n && ts.open != nil {
			s.log.Info("kafka: transaction timed out", "transactional_id", ts.id, "timeout", ts.timeout)
			ts.rollback()
			ts.timedOut = true
			if f := s.cfg.OnTxnTimeout; f != nil {
				f(ts.id)
			}
		}
	})
}

// initTransactional answers InitProducerId for a transactional id: it
// rolls back the id's open transaction here, registers the next epoch in
// the store (fencing every earlier instance on every gateway) and answers
// the id's producer id with it.
func (c *conn) initTransactional(ctx context.Context, req *kmsg.InitProducerIDRequest, resp *kmsg.InitProducerIDResponse) kmsg.Response {
	id := *req.TransactionalID
	timeout := time.Duration(req.TransactionTimeoutMillis) * time.Millisecond
	switch {
	case c.s.cfg.Txns == nil:
		resp.ErrorCode = kerr.CoordinatorNotAvailable.Code
		return resp
	case id == "":
		resp.ErrorCode = kerr.InvalidRequest.Code
		return resp
	case timeout > MaxTxnTimeout:
		resp.ErrorCode = kerr.InvalidTransactionTimeout.Code
		return resp
	case timeout <= 0:
		timeout = DefaultTxnTimeout
	}
	ts := c.s.txns.get(id, time.Now())
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.rollback()
	epoch, err := c.registerEpoch(ctx, id, req)
	if err != nil {
		resp.ErrorCode = fencedFor(codeOf(err), req.Version, 4)
		return resp
	}
	ts.epoch, ts.timeout, ts.timedOut, ts.ended, ts.used = epoch, timeout, false, false, time.Now()
	resp.ProducerID, resp.ProducerEpoch = ts.pid, epoch
	return resp
}

// registerEpoch stores the next epoch of transactional id and returns it.
// A producer that names its id and epoch (KIP-360) must name the current
// one. A concurrent registration of the same epoch elsewhere (the write
// is a duplicate) makes it read again and take the next.
func (c *conn) registerEpoch(ctx context.Context, id string, req *kmsg.InitProducerIDRequest) (int16, error) {
	st := c.s.cfg.Store
	if _, err := c.producerIDTopic(ctx); err != nil {
		return 0, err
	}
	for range 8 {
		c.barrier(ctx)
		epoch := int16(-1)
		if info, ok := st.Producer(ProducerIDTopic, txnProducer(id)); ok {
			epoch, _ = kproducer.Split(info.MaxSeqNo)
		}
		if req.ProducerID >= 0 && req.ProducerEpoch >= 0 && (req.ProducerID != txnProducerID(id) || req.ProducerEpoch < epoch) {
			return 0, refuse(kerr.ProducerFenced, "transactional id %q: producer %d epoch %d is not the current one (epoch %d)",
				id, req.ProducerID, req.ProducerEpoch, epoch)
		}
		if epoch >= math.MaxInt16-1 {
			return 0, refuse(kerr.ProducerFenced, "transactional id %q: its epochs are exhausted; use another transactional id", id)
		}
		epoch++
		res, err := st.Commit(ctx, &topicstore.CommitRequest{Writes: []topicstore.TopicWrite{{Topic: ProducerIDTopic,
			Messages: []topicstore.Message{{Partition: 0, ProducerID: txnProducer(id), SeqNo: kproducer.SeqNo(epoch, 0), HasSeqNo: true}}}}})
		if err != nil {
			return 0, err
		}
		if res.Writes[0].Written == 1 {
			return epoch, nil
		}
	}
	return 0, refuse(kerr.ConcurrentTransactions, "transactional id %q: other producers keep registering it", id)
}

// txnState returns the state of a transactional request's id, locked, or
// the error to answer; the caller unlocks it.
func (c *conn) txnState(id string, pid int64, epoch int16) (*txnState, error) {
	if c.s.cfg.Txns == nil {
		return nil, refuse(kerr.CoordinatorNotAvailable, "transactions are not served")
	}
	ts := c.s.txns.get(id, time.Now())
	ts.mu.Lock()
	ts.used = time.Now()
	if err := ts.check(pid, epoch); err != nil {
		ts.mu.Unlock()
		return nil, err
	}
	return ts, nil
}

// endTxn answers EndTxn: commit publishes everything the transaction
// staged and moves its groups' positions in one store commit, fenced on
// the id's registration; abort discards it. A retry of an EndTxn that was
// answered gets the same answer.
func (c *conn) endTxn(ctx context.Context, req *kmsg.EndTxnRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.EndTxnResponse)
	resp.ProducerID, resp.ProducerEpoch = -1, -1
	defer func() { resp.ErrorCode = fencedFor(resp.ErrorCode, req.Version, 2) }()
	ts, err := c.txnState(req.TransactionalID, req.ProducerID, req.ProducerEpoch)
	if err != nil {
		if !req.Commit && errors.Is(err, kerr.InvalidProducerEpoch) {
			// An abort acknowledges a timed-out transaction.
			ts = c.s.txns.get(req.TransactionalID, time.Now())
			ts.mu.Lock()
			ts.timedOut = false
			ts.mu.Unlock()
			return resp
		}
		resp.ErrorCode = codeOf(err)
		return resp
	}
	defer ts.mu.Unlock()
	if ts.open == nil {
		switch {
		case ts.ended && ts.endedOK == req.Commit, !req.Commit:
			// A retry of the last EndTxn, or an abort of nothing.
		default:
			resp.ErrorCode = kerr.InvalidTxnState.Code
		}
		return resp
	}
	tx := ts.open
	ts.open = nil
	if ts.timer != nil {
		ts.timer.Stop()
		ts.timer = nil
	}
	ts.parts, ts.groups, ts.seqs = nil, nil, nil
	if !req.Commit {
		tx.Rollback()
		ts.ended, ts.endedOK = true, false
		return resp
	}
	tx.Block().Fence(topicstore.ProducerFence{Topic: ProducerIDTopic, Producer: txnProducer(ts.id),
		Below: kproducer.SeqNo(ts.epoch+1, 0)})
	res, _, err := tx.End(ctx, true)
	if err != nil {
		c.s.log.Warn("kafka: transaction commit failed", "transactional_id", ts.id, "err", err)
		resp.ErrorCode = txnCommitCode(res.StoreErr)
		return resp
	}
	ts.ended, ts.endedOK = true, true
	return resp
}

// fencedFor is code as a client of a request version below since reads
// it: PRODUCER_FENCED (KIP-588) is INVALID_PRODUCER_EPOCH for clients
// that predate it, as Kafka answers them (kafkajs 2.2 does not know 90).
func fencedFor(code, version, since int16) int16 {
	if code == kerr.ProducerFenced.Code && version < since {
		return kerr.InvalidProducerEpoch.Code
	}
	return code
}

// txnCommitCode is the answer to an EndTxn commit the store refused.
// Fenced: a newer instance registered (PRODUCER_FENCED). An outcome the
// store could not learn is UNKNOWN_SERVER_ERROR, which clients take as
// "not confirmed": they abort, take a new epoch and go back to the
// committed offsets, which hold the transaction if it was stored.
// Anything else (nothing stored) leaves no transaction to retry:
// INVALID_PRODUCER_ID_MAPPING makes the producer abort and re-initialize.
func txnCommitCode(err error) int16 {
	switch {
	case errors.Is(err, topicstore.ErrFenced):
		return kerr.ProducerFenced.Code
	case errors.Is(err, topicstore.ErrOutcomeUnknown), errors.Is(err, context.DeadlineExceeded):
		return kerr.UnknownServerError.Code
	}
	return kerr.InvalidProducerIDMapping.Code
}
