package jetstream

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"

	"topicgate/topicstore/jetstream/jsext"
)

// The stream: its configuration, creating or adopting it at Open, and
// its subjects (spelled in fold/subjects.go).

// ensureStream creates the stream, or adopts it if it is topicgate's; a
// stream of that name that belongs to another application is refused.
func (s *Store) ensureStream(parent context.Context) (natsjs.Stream, error) {
	lookup := func() (natsjs.Stream, error) {
		ctx, cancel := context.WithTimeout(parent, s.opts.Timeout)
		defer cancel()
		return s.js.Stream(ctx, s.opts.Stream)
	}
	st, err := lookup()
	for try := 1; try < createTries && transientCreate(err); try++ {
		// The meta leader may be too busy to answer within the timeout
		// (another gateway creating the stream, many streams on the
		// cluster): a client-side timeout, so ask again.
		st, err = lookup()
	}
	if err == nil {
		if st.CachedInfo().Config.Metadata[streamMark] == "" {
			return nil, fmt.Errorf("the cluster already has a stream %q that is not topicgate's (it has no %q metadata): give topicgate another stream (--nats-stream), or remove that one", s.opts.Stream, streamMark)
		}
		ctx, cancel := context.WithTimeout(parent, s.opts.Timeout)
		defer cancel()
		return s.upgradeStream(ctx, st)
	}
	if !errors.Is(err, natsjs.ErrStreamNotFound) {
		return nil, fmt.Errorf("looking up stream %q: %w", s.opts.Stream, err)
	}
	create := func() (natsjs.Stream, error) {
		cctx, cancel := context.WithTimeout(parent, s.opts.Timeout)
		defer cancel()
		return s.js.CreateStream(cctx, s.streamConfig())
	}
	st, err = create()
	for try := 1; try < createTries && transientCreate(err); try++ {
		// A cluster that has just formed, on a busy machine, may not
		// place an R3 stream within the timeout (or answers 10005, no
		// suitable peers, while it has not heard from every node): ask
		// again with a fresh timeout. A creation that did happen although
		// its answer was lost comes back as "already in use": adopted.
		st, err = create()
	}
	if errors.Is(err, natsjs.ErrStreamNameAlreadyInUse) {
		// Another gateway created it between the lookup and the create
		// (or an earlier try did): adopt it (once the meta group has it
		// everywhere).
		actx, cancel := context.WithTimeout(parent, s.opts.Timeout)
		defer cancel()
		return s.adoptStream(actx)
	}
	if err != nil {
		return nil, fmt.Errorf("creating stream %q (R%d): %w", s.opts.Stream, s.opts.Replicas, err)
	}
	return st, nil
}

// upgradeStream turns on what a stream created by an older topicgate
// lacks: rollups (state messages replace their subject's last one) and
// per-message TTLs (stagings' "gone" markers expire, jetstream/maintain).
func (s *Store) upgradeStream(ctx context.Context, st natsjs.Stream) (natsjs.Stream, error) {
	cfg := st.CachedInfo().Config
	if cfg.AllowRollup && cfg.AllowMsgTTL {
		return st, nil
	}
	cfg.AllowRollup, cfg.AllowMsgTTL = true, true
	st, err := s.js.UpdateStream(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("allowing rollups and message TTLs on stream %q (shared-consumer states and staging markers need them): %w", cfg.Name, err)
	}
	return st, nil
}

// transientCreate reports whether a stream creation failed in a way that
// a moment later may not: a timeout, or no peers to place it on yet.
func transientCreate(err error) bool {
	return err != nil && (errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) ||
		jsext.ErrorCode(err) == jsext.ErrCodeNoSuitablePeers)
}

// adoptStream looks the stream up until the cluster answers with it: a
// stream another gateway has just created may not be known yet to the
// node this one asks. The wait is bounded by the request's context.
func (s *Store) adoptStream(ctx context.Context) (natsjs.Stream, error) {
	for delay := 10 * time.Millisecond; ; delay = min(2*delay, 500*time.Millisecond) {
		st, err := s.js.Stream(ctx, s.opts.Stream)
		if err == nil {
			if st.CachedInfo().Config.Metadata[streamMark] == "" {
				return nil, fmt.Errorf("the cluster already has a stream %q that is not topicgate's (it has no %q metadata): give topicgate another stream, or remove that one", s.opts.Stream, streamMark)
			}
			return st, nil
		}
		if !errors.Is(err, natsjs.ErrStreamNotFound) {
			return nil, fmt.Errorf("looking up stream %q: %w", s.opts.Stream, err)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("stream %q was created by another gateway but is not visible yet: %w", s.opts.Stream, ctx.Err())
		case <-time.After(delay):
		}
	}
}

// streamConfig is the stream topicgate creates.
func (s *Store) streamConfig() natsjs.StreamConfig {
	return natsjs.StreamConfig{
		Name:               s.opts.Stream,
		Description:        "topicgate topics: catalog, record batches, producers and consumer positions",
		Subjects:           []string{s.subj.All()},
		Storage:            natsjs.FileStorage,
		Replicas:           s.opts.Replicas,
		AllowDirect:        true,
		AllowAtomicPublish: true,
		AllowRollup:        true, // shared-consumer states replace their subject's last one (jetstream/queue)
		AllowMsgTTL:        true, // stagings' "gone" markers expire (jetstream/maintain)
		Metadata:           map[string]string{streamMark: "1"},
	}
}
