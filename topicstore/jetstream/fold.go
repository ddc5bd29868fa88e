package jetstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"

	"topicgate/topicstore"
	"topicgate/topicstore/jetstream/fold"
)

// The state of a gateway is a fold of the stream's message headers, in
// stream order, by one ordered consumer (headers only: record batch
// payloads are fetched by Scan when read). Every gateway folds the same
// messages in the same order, so all converge on the same state; a
// gateway that starts replays the headers from the stream's first message.
// Nothing changes the state but the fold: a commit publishes, then waits
// until the fold has applied its messages (waitApplied), so a gateway
// reads its own writes and never shows a state the stream does not hold.

// startFold starts the ordered consumer and waits until it has folded
// everything the stream holds (sync); from the newest snapshot's sequence
// on when there is one (jetstream/snapshot).
func (s *Store) startFold(ctx context.Context) error {
	cfg := natsjs.OrderedConsumerConfig{
		FilterSubjects: []string{s.subj.All()},
		HeadersOnly:    true,
		DeliverPolicy:  natsjs.DeliverAllPolicy,
	}
	if !s.opts.IgnoreSnapshots {
		from, err := s.snap.Start(ctx) // jetstream/snapshot
		if err != nil {
			return err
		}
		if from > 0 {
			cfg.DeliverPolicy, cfg.OptStartSeq = natsjs.DeliverByStartSequencePolicy, from+1
		}
	}
	create := func() (natsjs.Consumer, error) {
		rctx, cancel := s.request(ctx)
		defer cancel()
		return s.stream.OrderedConsumer(rctx, cfg)
	}
	// The consumer's creation needs the meta leader, which a cluster that
	// has just formed on a busy machine may not answer for within one
	// timeout: asked again like the stream's creation (transientCreate).
	cons, err := create()
	for try := 1; try < createTries && transientCreate(err) && ctx.Err() == nil; try++ {
		cons, err = create()
	}
	if err != nil {
		return s.unavailable(err)
	}
	// A heartbeat every second (nats.go's default is 5s, and it
	// re-creates the consumer after two missed ones): the consumer lives on
	// one node, and when that node dies the fold stalls until then.
	// Pulls of foldPull messages (nats.go's default is 500): a gateway
	// starting on a stream of 318k messages folded it in 4.4 s on average
	// against 6.0 s (five rounds alternated); the messages are headers
	// only, so the buffer stays small.
	// The pull is also capped in bytes (headers can be large: a catalog
	// record of thousands of partitions), at max_payload so that any one
	// message fits.
	cc, err := cons.Consume(func(m natsjs.Msg) { s.consume(m) }, natsjs.PullHeartbeat(foldHeartbeat),
		natsjs.PullMaxMessagesWithBytesLimit(foldPull, foldPullBytes))
	if err != nil {
		return s.unavailable(err)
	}
	s.cons = cc
	return s.replay(ctx)
}

// replay waits until the fold has applied everything the stream held at
// start. Unlike sync it is not bounded by one request's timeout: a stream
// of a few hundred thousand messages takes longer than that to fold (about
// 60k messages a second here), and a gateway must be able to start on it.
// It fails when the fold makes no progress for a whole timeout.
func (s *Store) replay(ctx context.Context) error {
	ask := func() (*natsjs.StreamInfo, error) {
		rctx, cancel := s.request(ctx)
		defer cancel()
		return s.stream.Info(rctx)
	}
	info, err := ask()
	for try := 1; try < createTries && transientCreate(err) && ctx.Err() == nil; try++ {
		info, err = ask() // a leader elected a moment ago, on a busy machine
	}
	if err != nil {
		return s.unavailable(err)
	}
	for {
		s.mu.Lock()
		from := s.applied
		s.mu.Unlock()
		err := s.waitApplied(ctx, info.State.LastSeq)
		if err == nil || !errors.Is(err, topicstore.ErrUnavailable) || ctx.Err() != nil {
			return err
		}
		s.mu.Lock()
		progressed := s.applied > from
		s.mu.Unlock()
		if !progressed {
			return err
		}
	}
}

// sync waits until the fold has applied everything the stream held when
// it was called (its last sequence, asked of the stream's leader).
func (s *Store) sync(ctx context.Context) error {
	rctx, cancel := s.request(ctx)
	defer cancel()
	info, err := s.stream.Info(rctx)
	if err != nil {
		return s.unavailable(err)
	}
	return s.waitApplied(ctx, info.State.LastSeq)
}

// foldHeartbeat is the ordered consumer's idle heartbeat; fillAfter is
// how long waitApplied lets it deliver nothing before fetching what it
// waits for itself (fill); foldPull is how many messages one pull of it
// asks for (see startFold).
const (
	foldPullBytes = minPayload
	foldHeartbeat = time.Second
	fillAfter     = 250 * time.Millisecond
	foldPull      = 4096
)

// waitApplied blocks until the fold has applied seq (or ctx ends). If the
// ordered consumer stops delivering before, fill fetches it (watchFold).
// Once the fold failed to apply a message, it fails with that error.
func (s *Store) waitApplied(ctx context.Context, seq uint64) error {
	ctx, cancel := s.request(ctx)
	defer cancel()
	stop := context.AfterFunc(ctx, func() {
		s.mu.Lock()
		s.cond.Broadcast()
		s.mu.Unlock()
	})
	defer stop()
	waiting := make(chan struct{})
	defer close(waiting)
	go s.watchFold(seq, waiting)
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.applied < seq && !s.closed && ctx.Err() == nil {
		s.cond.Wait()
	}
	switch {
	case s.applied >= seq && s.foldErr != nil:
		// The view is wrong from there on (a partition's offsets, say):
		// refuse to answer from it, at start (Open) as later.
		return fmt.Errorf("topicgate: this gateway cannot fold the stream, so its view of the cluster would be wrong: %w", s.foldErr)
	case s.applied >= seq:
		return nil
	case s.closed:
		return topicstore.ErrClosed
	}
	return s.unavailable(ctx.Err())
}

// waitOwn is waitApplied for a batch this gateway published, msgs, which
// the stream acknowledged at ack (its last message's sequence; a batch
// lands at consecutive sequences). Once the fold has applied everything
// before the batch it applies the batch from msgs itself, as the ordered
// consumer would (the same subjects and headers; the consumer's copy,
// when it comes, is then skipped), instead of waiting for the consumer to
// deliver it: that saves a commit the push from the server (0.5-0.9 ms a
// commit here). If the message before the batch is gone from the stream
// (a rollup, a purge) the fold cannot tell it has everything before, and
// the consumer's delivery is waited for as before; and if the fold got
// past the batch without one of its messages (a later message on the
// same subject deleted it first: ownSuperseded), it waits for the stream's
// end, so that the subject shows the batch's effect or a later one.
func (s *Store) waitOwn(ctx context.Context, ack uint64, msgs []*nats.Msg) error {
	n := uint64(len(msgs))
	if n == 0 || ack < n {
		return s.io.waitApplied(ctx, ack)
	}
	first := ack - n + 1
	s.mu.Lock()
	ready := s.applied == first-1
	s.mu.Unlock()
	if !ready && first > 1 {
		if err := s.io.waitApplied(ctx, first-1); err != nil {
			return err
		}
	}
	s.mu.Lock()
	own := s.applied == first-1 && s.foldErr == nil && !s.closed
	if own {
		for i, m := range msgs {
			seq := first + uint64(i)
			if err := s.fold.Apply(m.Subject, m.Header, seq, time.Time{}); err != nil && s.foldErr == nil {
				s.foldErr = fmt.Errorf("stream %s sequence %d (%s): %w", s.opts.Stream, seq, m.Subject, err)
			}
			s.applied = seq
			s.recordDigest(seq)
		}
		s.ownApplied.Add(1)
		s.cond.Broadcast()
	}
	s.mu.Unlock()
	if err := s.io.waitApplied(ctx, ack); err != nil || own {
		return err
	}
	if s.ownSuperseded(first, msgs) {
		// A message of the batch was rolled up by a later one (another
		// gateway's state of the same partition, say) before this fold
		// got it: the fold skipped it, and shows its subject as it was
		// before the batch until it applies that later message, which
		// the stream already holds. Read-your-writes: wait for it.
		err := s.io.sync(ctx)
		if err != nil {
			// No answer from the stream (an election, a reconnect, which
			// fail at once): let the fold go on for up to the store's
			// timeout before the caller asks again (waitStored).
			s.mu.Lock()
			next := s.applied + 1
			s.mu.Unlock()
			_ = s.io.waitApplied(ctx, next)
		}
		return err
	}
	return nil
}

// ownSuperseded reports whether the fold, having applied past a batch of
// this gateway (msgs, at first, first+1, ...), lacks one of its
// messages on a subject that keeps its last message (a shared-consumer
// state, a position, a producer): a later message on that subject
// deleted it before the fold got it.
func (s *Store) ownSuperseded(first uint64, msgs []*nats.Msg) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, m := range msgs {
		switch s.subj.Kind(m.Subject) { // record batches, the bulk of a batch, pass without allocating
		case fold.KindShared, fold.KindPosition, fold.KindProducer:
		default:
			continue
		}
		if m.Header.Get(fold.HTxn) != "" {
			continue
		}
		if last, _, ok := s.fold.SubjectLast(s.subj.Tokens(m.Subject)); !ok || last < first+uint64(i) {
			return true
		}
	}
	return false
}

// watchFold fills up to seq (fill) once the ordered consumer has
// delivered nothing for fillAfter (at once while it is known to be behind),
// unless waiting is closed first. A consumer that delivers, however far
// behind (a gateway replaying the stream at start), is left to it.
func (s *Store) watchFold(seq uint64, waiting <-chan struct{}) {
	s.mu.Lock()
	last, stalled := s.applied, s.stalled
	s.mu.Unlock()
	for !stalled {
		select {
		case <-waiting:
			return
		case <-time.After(fillAfter):
		}
		s.mu.Lock()
		progressed := s.applied > last
		last, stalled = s.applied, s.stalled
		s.mu.Unlock()
		if !progressed {
			break
		}
	}
	s.fill(seq)
}

// fill folds the messages up to seq that the ordered consumer has not
// delivered, fetching them itself with batched direct gets (the messages
// at or after a sequence, which any current replica serves, with neither
// the stream's leader nor the meta leader). The consumer stalls when its
// node dies (until two missed heartbeats) and when the gateway's
// connection moves to another node; either way a new consumer must be
// created, which needs the meta leader: a gateway must not stop
// committing for that, nor fall behind the other gateways' writes. A
// replica holds a prefix of the stream, so what it returns is the next
// messages; one that lacks them answers not found, and fill asks again.
// One fill runs at a time, up to the highest sequence asked for, until it
// has made no progress for the store's timeout.
func (s *Store) fill(seq uint64) {
	s.mu.Lock()
	s.fillTo = max(s.fillTo, seq)
	if s.filling {
		s.mu.Unlock()
		return
	}
	s.filling = true
	defer func() {
		s.filling = false
		s.mu.Unlock()
	}()
	giveUp := time.Now().Add(s.opts.Timeout)
	for s.applied < s.fillTo && !s.closed && time.Now().Before(giveUp) {
		next := s.applied + 1
		s.mu.Unlock()
		if n, _ := s.fetchFrom(next); n > 0 {
			giveUp = time.Now().Add(s.opts.Timeout)
		} else {
			// No replica answered, or a lagging one: ask again once the
			// consumer delivers something, or after a short while.
			s.waitAdvance(next-1, 10*time.Millisecond)
		}
		s.mu.Lock()
	}
}

// waitAdvance blocks until the fold applies a message past from, d passes
// or the store closes. What a refused or missing write waits for is
// another publish landing, and the fold sees that: the timer only bounds
// the wait when nothing lands.
func (s *Store) waitAdvance(from uint64, d time.Duration) {
	var expired atomic.Bool
	t := time.AfterFunc(d, func() {
		expired.Store(true)
		s.mu.Lock()
		s.cond.Broadcast()
		s.mu.Unlock()
	})
	defer t.Stop()
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.applied <= from && !s.closed && !expired.Load() {
		s.cond.Wait()
	}
}

// fillBatch is how many messages one direct get of fill asks for;
// fillFetchTimeout is how long it waits for each (a replica answers in a
// millisecond; a request on a connection to a node that just died is
// lost, and asked again).
const (
	fillBatch        = 500
	fillFetchTimeout = 250 * time.Millisecond
)

// fetchFrom folds the messages at and after sequence next that one
// batched direct get returns, and says how many it folded.
func (s *Store) fetchFrom(next uint64) (int, error) {
	inbox := s.nc.NewInbox()
	sub, err := s.nc.SubscribeSync(inbox)
	if err != nil {
		return 0, err
	}
	defer sub.Unsubscribe()
	req, err := json.Marshal(map[string]any{"seq": next, "next_by_subj": s.subj.All(), "batch": fillBatch, "max_bytes": 8 << 20})
	if err != nil {
		return 0, err
	}
	if err := s.nc.PublishRequest("$JS.API.DIRECT.GET."+s.opts.Stream, inbox, req); err != nil {
		return 0, err
	}
	n := 0
	for {
		m, err := sub.NextMsg(min(s.opts.Timeout, fillFetchTimeout))
		if err != nil {
			return n, err
		}
		if st := m.Header.Get("Status"); st != "" {
			return n, nil // 204: the end of the batch; 404: nothing at or after next here
		}
		seq, err := strconv.ParseUint(m.Header.Get(natsjs.SequenceHeader), 10, 64)
		if err != nil {
			return n, fmt.Errorf("direct get: bad %s %q", natsjs.SequenceHeader, m.Header.Get(natsjs.SequenceHeader))
		}
		ts, _ := time.Parse(time.RFC3339Nano, m.Header.Get(natsjs.TimeStampHeaer))
		s.foldAt(seq, m.Header.Get(natsjs.SubjectHeader), m.Header, ts, true)
		n++
	}
}

// fold applies one message's headers.
func (s *Store) consume(m natsjs.Msg) {
	md, err := m.Metadata()
	if err != nil {
		return
	}
	s.foldAt(md.Sequence.Stream, m.Subject(), m.Headers(), md.Timestamp, false)
}

// foldAt applies the message at stream sequence seq, unless it was;
// byFill says fill fetched it, not the consumer.
func (s *Store) foldAt(seq uint64, subject string, h nats.Header, ts time.Time, byFill bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if seq <= s.applied {
		return // an ordered consumer's redelivery after a reset, or one fill applied
	}
	s.stalled = byFill
	if err := s.fold.Apply(subject, h, seq, ts); err != nil && s.foldErr == nil {
		s.foldErr = fmt.Errorf("stream %s sequence %d (%s): %w", s.opts.Stream, seq, subject, err)
	}
	s.applied = seq
	s.recordDigest(seq)
	s.cond.Broadcast()
}

// recordDigest runs the simulation's hook (Store.onApplied). It runs
// under s.mu.
func (s *Store) recordDigest(seq uint64) {
	if s.onApplied != nil {
		s.onApplied(seq)
	}
}
