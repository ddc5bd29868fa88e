package kafkaload

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// initTimeout bounds the transactional producers' initialization: a
// broker without transactions fails there, and rpw says so rather than
// letting franz-go retry for its whole retry timeout.
const initTimeout = 10 * time.Second

// rpw: prefills Messages records into <topic>_rpw_in (untimed), then
// Clients GroupTransactSessions of group <topic>_rpw each loop: poll up to
// Batch records, produce each value reversed to <topic>_rpw_out, and end
// the transaction with a commit, which commits the group's offsets in it
// (TxnOffsetCommit). A transaction that aborts (a rebalance) is redone by
// whoever is assigned its partitions next. The clock runs from the
// sessions' start to the commit that consumed the last input; latency is
// per committed transaction. Checked: every input consumed by exactly one
// committed transaction, and <topic>_rpw_out, read committed, holds
// exactly the reversed inputs.
func rpw(ctx context.Context, cfg *Config, res *Result) error {
	in, out, group := cfg.Topic+"_rpw_in", cfg.Topic+"_rpw_out", cfg.Topic+"_rpw"
	txnID := func(i int) string { return fmt.Sprintf("%s-%d", group, i) }
	if err := probeTransactions(ctx, cfg, txnID(0)); err != nil {
		return err
	}
	if err := recreate(ctx, cfg, in, out); err != nil {
		return err
	}
	seed := maphash.MakeSeed()
	want := map[uint64]int{}
	if err := prefill(ctx, cfg, in, func(v []byte) { want[maphash.Bytes(seed, reversed(v))]++ }); err != nil {
		return err
	}
	spans, err := offsets(ctx, cfg, in)
	if err != nil {
		return err
	}
	if got := total(spans); got != int64(cfg.Messages) {
		return fmt.Errorf("prefill: %s holds %d records, %d were acknowledged", in, got, cfg.Messages)
	}

	sessions := make([]*kgo.GroupTransactSession, 0, cfg.Clients)
	defer func() {
		for _, s := range sessions {
			s.Close()
		}
	}()
	for i := range cfg.Clients {
		s, err := kgo.NewGroupTransactSession(cfg.opts(
			kgo.TransactionalID(txnID(i)),
			kgo.DefaultProduceTopic(out), kgo.RequiredAcks(kgo.AllISRAcks()),
			kgo.ConsumerGroup(group), kgo.ConsumeTopics(in),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
			kgo.FetchIsolationLevel(kgo.ReadCommitted()), // offsets fetched are stable: franz-go always asks so
		)...)
		if err != nil {
			return err
		}
		sessions = append(sessions, s)
		ictx, cancel := context.WithTimeout(ctx, initTimeout)
		_, _, err = s.Client().ProducerID(ictx)
		cancel()
		if err != nil {
			return noTxn(fmt.Sprintf("InitProducerId for transactional id %q", txnID(i)), err)
		}
	}

	tr := newTracker(spans)
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	lats := make([][]time.Duration, len(sessions))
	var commits, aborts atomic.Int64
	var fe firstErr
	var wg sync.WaitGroup
	start := time.Now()
	for i, s := range sessions {
		wg.Go(func() {
			err := transact(runCtx, s, cfg.Batch, &lats[i], func(recs []*kgo.Record, committed bool) {
				if !committed {
					aborts.Add(1)
					return
				}
				commits.Add(1)
				if tr.add(recs) {
					stop()
				}
			})
			if err != nil && runCtx.Err() == nil {
				fe.set(fmt.Errorf("client %d: %w", i, err))
				stop()
			}
		})
	}
	wg.Wait()
	distinct, dups, doneAt := tr.result()
	if doneAt.IsZero() {
		doneAt = time.Now()
	}
	res.record(distinct, commits.Load(), doneAt.Sub(start), cfg.Size, "transaction", lats...)
	res.Duplicates, res.Retries = dups, aborts.Load()
	res.Notes = fmt.Sprintf("%d commits, %d aborts", commits.Load(), aborts.Load())
	if err := fe.get(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%w (%d of %d inputs consumed)", err, distinct, cfg.Messages)
	}
	if dups != 0 {
		return fmt.Errorf("exactly-once violated: %d inputs were consumed by more than one committed transaction", dups)
	}
	return checkOutput(ctx, cfg, out, seed, want)
}

// transact is one session's loop; done is told of every transaction's
// inputs and whether it committed. It returns when ctx ends.
func transact(ctx context.Context, s *kgo.GroupTransactSession, batch int, lats *[]time.Duration, done func([]*kgo.Record, bool)) error {
	for {
		fs := s.PollRecords(ctx, batch)
		if ctx.Err() != nil {
			return nil
		}
		for _, e := range fs.Errors() {
			return fmt.Errorf("fetch %s/%d: %w", e.Topic, e.Partition, e.Err)
		}
		recs := fs.Records()
		if len(recs) == 0 {
			continue
		}
		t0 := time.Now()
		if err := s.Begin(); err != nil {
			return fmt.Errorf("begin: %w", err)
		}
		e := kgo.AbortingFirstErrPromise(s.Client())
		for _, r := range recs {
			s.Produce(ctx, &kgo.Record{Value: reversed(r.Value)}, e.Promise())
		}
		committed, err := s.End(ctx, kgo.TransactionEndTry(e.Err() == nil))
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("end transaction: %w", err)
		}
		if committed {
			*lats = append(*lats, time.Since(t0))
		}
		done(recs, committed)
	}
}

// probeTransactions asks for the transaction coordinator of txnID and
// fails with ErrNoTransactions when there is none. (A Kafka cluster also
// answers COORDINATOR_NOT_AVAILABLE while it creates its transaction log,
// on the first transactional use: run again then.)
func probeTransactions(ctx context.Context, cfg *Config, txnID string) error {
	cl, err := kgo.NewClient(cfg.opts()...)
	if err != nil {
		return err
	}
	defer cl.Close()
	req := kmsg.NewPtrFindCoordinatorRequest()
	req.CoordinatorType = 1 // transaction
	req.CoordinatorKey = txnID
	req.CoordinatorKeys = []string{txnID}
	ctx, cancel := context.WithTimeout(ctx, initTimeout)
	defer cancel()
	r, err := cl.SeedBrokers()[0].RetriableRequest(ctx, req)
	if err != nil {
		return fmt.Errorf("FindCoordinator: %w", err)
	}
	resp := r.(*kmsg.FindCoordinatorResponse)
	code, msg := resp.ErrorCode, resp.ErrorMessage
	if len(resp.Coordinators) > 0 {
		code, msg = resp.Coordinators[0].ErrorCode, resp.Coordinators[0].ErrorMessage
	}
	if err := kerr.ErrorForCode(code); err != nil {
		if msg != nil && *msg != "" {
			err = fmt.Errorf("%w (%s)", err, *msg)
		}
		return noTxn(fmt.Sprintf("FindCoordinator for transactional id %q", txnID), err)
	}
	return nil
}

func noTxn(what string, err error) error {
	if errors.Is(err, kerr.CoordinatorNotAvailable) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, kerr.TransactionalIDAuthorizationFailed) || errors.Is(err, kerr.UnsupportedVersion) {
		return fmt.Errorf("%w: %s: %v; rpw needs transactions (see docs/kafka/limits.md)", ErrNoTransactions, what, err)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// prefill produces cfg.Messages records to topic (untimed), telling seen
// each value.
func prefill(ctx context.Context, cfg *Config, topic string, seen func([]byte)) error {
	cl, err := kgo.NewClient(cfg.opts(kgo.DefaultProduceTopic(topic), kgo.ProducerLinger(5*time.Millisecond))...)
	if err != nil {
		return err
	}
	defer cl.Close()
	p := newPayloads("rpw", 0, cfg.Size)
	var e kgo.FirstErrPromise
	for range cfg.Messages {
		v := p.take()
		seen(v)
		cl.Produce(ctx, &kgo.Record{Value: v}, e.Promise())
	}
	if err := cl.Flush(ctx); err != nil {
		return fmt.Errorf("prefill: %w", err)
	}
	if err := e.Err(); err != nil {
		return fmt.Errorf("prefill: %w", err)
	}
	return nil
}

// checkOutput reads topic (read committed) from its start until it has as
// many records as were prefilled and checks they are exactly the
// reversed inputs.
func checkOutput(ctx context.Context, cfg *Config, topic string, seed maphash.Seed, want map[uint64]int) error {
	cl, err := kgo.NewClient(cfg.opts(kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()))...)
	if err != nil {
		return err
	}
	defer cl.Close()
	extra := 0
	for n := 0; n < cfg.Messages; {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("read %s: %d of %d records: %w", topic, n, cfg.Messages, err)
		}
		for _, e := range fs.Errors() {
			return fmt.Errorf("read %s/%d: %w", e.Topic, e.Partition, e.Err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			n++
			h := maphash.Bytes(seed, r.Value)
			if want[h] == 0 {
				extra++
				return
			}
			want[h]--
		})
	}
	if extra != 0 {
		return fmt.Errorf("%s: %d records are no reversed input", topic, extra)
	}
	return nil
}

// tracker counts the inputs committed transactions consumed.
type tracker struct {
	mu       sync.Mutex
	spans    map[int32]span
	seen     map[int32][]bool
	want     int64
	distinct int64
	dups     int64
	doneAt   time.Time
}

func newTracker(spans map[int32]span) *tracker {
	t := &tracker{spans: spans, seen: map[int32][]bool{}, want: total(spans)}
	for p, s := range spans {
		t.seen[p] = make([]bool, s.end-s.start)
	}
	return t
}

// add records one committed transaction's inputs and reports whether
// every input is now consumed.
func (t *tracker) add(recs []*kgo.Record) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, r := range recs {
		s := t.seen[r.Partition]
		i := r.Offset - t.spans[r.Partition].start
		if i < 0 || i >= int64(len(s)) {
			continue
		}
		if s[i] {
			t.dups++
			continue
		}
		s[i] = true
		t.distinct++
	}
	if t.distinct >= t.want && t.doneAt.IsZero() {
		t.doneAt = time.Now()
	}
	return !t.doneAt.IsZero()
}

func (t *tracker) result() (distinct, dups int64, doneAt time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.distinct, t.dups, t.doneAt
}
