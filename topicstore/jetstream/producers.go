package jetstream

import (
	"topicgate/topicstore"
	"topicgate/topicstore/jetstream/fold"
	"topicgate/topicstore/jetstream/plan"

	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"
)

// Producers that expire leave the stream and every gateway's fold.
//
// A producer's state is the last message on its subject (p.<topic>.<id>):
// one fold entry for every producer alive, and a bounded number of
// messages. A rollup (Nats-Rollup: sub) removes the messages before it,
// but it costs the stream a deletion on every replica inside the commit,
// so a commit rolls a producer's subject up only when it would otherwise
// hold plan.ProducerRollupEvery messages (the fold counts them, pending); the
// maintenance lease holder purges what idle producers left below their
// last message (compactProducers). So an active producer holds at most
// plan.ProducerRollupEvery messages, an idle one a single message. One
// whose topic's producer_inactivity_period passed without a write is
// forgotten: every gateway already treats it as fresh (the plan), and
// the maintenance lease holder removes it (expireProducers) in two steps:
//
//  1. it purges the producer's subject up to the sequence its fold holds
//     for it, so a write that came meanwhile survives;
//  2. it publishes an expiry notice on e.<topic> (rolled up: only the
//     newest is kept) naming a cutoff: every fold that applies the notice
//     drops the topic's producers last written before it.
//
// A purge is not seen by the folds, and a gateway that lags behind a
// rolled-up notice never sees it; either way a fold may hold an entry for
// a subject that is empty now, or (the lease holder died between the two
// steps, or a write came) lack one for a subject that is not. Neither
// changes a decision: an expired producer is fresh whatever the fold
// holds; only the expectation on its subject (Nats-Expected-Last-Subject-
// Sequence) can be wrong, and the batch is refused. A group refused more
// than once asks the stream for the last message of each fresh producer's
// subject (repairProducers) and takes it as its state. So nothing is kept
// per producer beyond its inactivity period, and the cost of the repair
// falls on the rare write that races an expiry.

// producerIdle is how long a producer has not written before maintenance
// purges its subject down to its last message.
const producerIdle = time.Minute

// compactProducers purges, below its last message, the subject of each
// producer idle at now whose subject holds more than one message, and
// returns how many it purged. A purge is not seen by the folds: the lease
// holder clears its own count, and another gateway's count only makes its
// next rollup come early.
func (s *Store) compactProducers(ctx context.Context, now time.Time) (int, error) {
	var todo []expiredProducer
	s.mu.Lock()
	for id, t := range s.fold.ByID {
		for name, ps := range t.Prods {
			if ps.Pending > 0 && !ps.Void && now.Sub(ps.At) >= producerIdle {
				todo = append(todo, expiredProducer{id, name, ps.Seq})
			}
		}
	}
	s.mu.Unlock()
	for _, p := range todo {
		rctx, cancel := s.request(ctx)
		err := s.io.purge(rctx, s.subj.Producer(p.topic, p.id), p.seq)
		cancel()
		if err != nil {
			return 0, fmt.Errorf("compacting producer %q: %w", p.id, s.unavailable(err))
		}
		s.mu.Lock()
		if t := s.fold.ByID[p.topic]; t != nil {
			if ps := t.Prods[p.id]; ps != nil && ps.Seq == p.seq {
				ps.Pending = 0
			}
		}
		s.mu.Unlock()
	}
	return len(todo), nil
}

// expiredProducer is one producer expireProducers removes.
type expiredProducer struct {
	topic uint64
	id    string
	seq   uint64
}

// expireProducers removes the producers expired at now from the stream
// and the folds (see above) and returns how many it removed.
func (s *Store) expireProducers(ctx context.Context, now time.Time) (int, error) {
	var gone []expiredProducer
	cutoffs := map[uint64]int64{}
	s.mu.Lock()
	for id, t := range s.fold.ByID {
		cutoff := now.Add(-s.expiry(t))
		for name, ps := range t.Prods {
			if ps.At.Before(cutoff) {
				gone = append(gone, expiredProducer{id, name, ps.Seq})
				cutoffs[id] = cutoff.UnixMicro()
			}
		}
	}
	s.mu.Unlock()
	for _, p := range gone {
		rctx, cancel := s.request(ctx)
		err := s.io.purge(rctx, s.subj.Producer(p.topic, p.id), p.seq+1)
		cancel()
		if err != nil {
			return 0, fmt.Errorf("purging expired producer %q: %w", p.id, s.unavailable(err))
		}
	}
	for id, cutoff := range cutoffs {
		m := nats.NewMsg(s.subj.Expiry(id))
		m.Header.Set(fold.HBefore, strconv.FormatInt(cutoff, 10))
		m.Header.Set(natsjs.MsgRollup, natsjs.MsgRollupSubject) // only the newest notice matters
		rctx, cancel := s.request(ctx)
		_, err := s.js.PublishMsg(rctx, m)
		cancel()
		if err != nil {
			return 0, fmt.Errorf("publishing the expiry of producers: %w", s.unavailable(err))
		}
	}
	s.expiredProducers.Add(int64(len(gone)))
	return len(gone), nil
}

// repairProducers sets the fold's entry of each producer in keys to what
// its subject holds now: the last message's state, or none when the
// subject is empty; a last message the fold has not reached yet it
// leaves to the fold. The fold may be wrong about a producer that expired
// (see above); the stream is not. Errors leave an entry as it was: the
// group is refused again and retried.
func (s *Store) repairProducers(keys []plan.ProdKey) {
	for _, k := range keys {
		ctx, cancel := s.request(context.Background())
		seq, h, err := s.io.lastFor(ctx, s.subj.Producer(k.Topic, k.Producer))
		cancel()
		if err != nil {
			continue
		}
		s.mu.Lock()
		if seq > s.applied {
			// The fold is behind the stream there: it will fold that
			// message itself. Taking it now would make the fold hold a
			// state its stream position does not (jetstream/snapshot checks
			// that every gateway holds the same at the same position).
			s.mu.Unlock()
			continue
		}
		if t := s.fold.ByID[k.Topic]; t != nil {
			cur := t.Prods[k.Producer]
			switch {
			case seq == 0:
				delete(t.Prods, k.Producer)
			case cur == nil || cur.Seq < seq:
				t.Prods[k.Producer] = fold.ProducerFromHeaders(h, seq)
			}
		}
		s.mu.Unlock()
	}
}

// expiry is how long t's producers live without writes.
func (s *Store) expiry(t *fold.Topic) time.Duration {
	return topicstore.ProducerExpiry(&t.Rec.Config, s.opts.ProducerExpiry)
}
