package jetstream

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"topicgate/topicstore"
	"topicgate/topicstore/jetstream/jsext"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"
)

// Read barriers. A gateway's fold trails the stream by the time a message
// takes to reach its ordered consumer: a stateless read through one
// gateway could miss, for a few milliseconds, a commit another gateway
// acknowledged. Barrier closes that gap the way etcd's ReadIndex does: it
// asks the stream's leader for its last sequence and waits until the fold
// has applied it. Callers that arrive while a request is out wait for the
// next one (the one in flight may have been answered before they
// arrived), and every caller waiting then shares it, so concurrent reads
// cost one request per round trip, not one each.
//
// A round that gets no answer within the store's timeout (no leader: an
// election; or a leader busy, as right after purging a large staging)
// does not fail its statements: they read the gateway's view as it is,
// and barrierMisses counts them (/metrics). Reads keep working while the
// stream has no leader, as they did before barriers; no commit can be
// acknowledged meanwhile anyway, unless this gateway alone is cut off
// from a leader the others reach.

type barriers struct {
	mu      sync.Mutex
	running bool
	waiting []chan error
}

// Barrier implements topicstore.ReadBarrier.
func (s *Store) Barrier(ctx context.Context) error {
	ch := make(chan error, 1)
	b := &s.barrier
	b.mu.Lock()
	b.waiting = append(b.waiting, ch)
	if !b.running {
		b.running = true
		go s.barrierLoop()
	}
	b.mu.Unlock()
	select {
	case err := <-ch:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// barrierLoop serves rounds until no caller waits: each round takes every
// caller waiting, syncs the fold with the leader once, and answers them.
func (s *Store) barrierLoop() {
	b := &s.barrier
	for {
		b.mu.Lock()
		round := b.waiting
		b.waiting = nil
		if len(round) == 0 {
			b.running = false
			b.mu.Unlock()
			return
		}
		b.mu.Unlock()
		err := s.sync(context.Background())
		if err != nil && errors.Is(err, topicstore.ErrUnavailable) {
			s.barrierMisses.Add(int64(len(round)))
			err = nil
		}
		for _, ch := range round {
			ch <- err
		}
	}
}

// Ready implements topicstore.Readier: the cluster stores a probe (a
// message on this gateway's subject <prefix>.k.<gateway>, which replaces
// the one before it), which needs a leader with a quorum (a leader cut
// off from the others still answers questions for a while, and even
// reports them current), and this gateway's fold catches up with it,
// both within ctx.
func (s *Store) Ready(ctx context.Context) error {
	if s.isClosed() {
		return topicstore.ErrClosed
	}
	if !s.nc.IsConnected() {
		return fmt.Errorf("not connected to the NATS cluster (%s)", jsext.RedactURLs(s.opts.URLs))
	}
	m := nats.NewMsg(s.subj.Probe(s.stage.gw))
	m.Header.Set(natsjs.MsgRollup, natsjs.MsgRollupSubject)
	rctx, cancel := s.request(ctx)
	seq, err := s.io.publish(rctx, m)
	cancel()
	if err != nil {
		return fmt.Errorf("the cluster did not store a probe: %w", s.unavailable(err))
	}
	if err := s.waitApplied(ctx, seq); err != nil {
		s.mu.Lock()
		applied := s.applied
		s.mu.Unlock()
		return fmt.Errorf("this gateway's view (stream sequence %d of %d) is not caught up with the stream: %w", applied, seq, err)
	}
	return nil
}

// Sync implements topicstore.ReadBarrier.
func (s *Store) Sync(ctx context.Context) error { return s.sync(ctx) }

var _ topicstore.ReadBarrier = (*Store)(nil)
