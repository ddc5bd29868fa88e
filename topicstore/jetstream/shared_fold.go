package jetstream

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"log/slog"

	natsjs "github.com/nats-io/nats.go/jetstream"

	"topicgate/topicstore/sharedcore"
)

// Shared consumers on the cluster: the fold's part.
//
// Per (topic, shared consumer, partition) one state subject
// <prefix>.s.<topicID>.<consumerHex>.<partition> holds the partition's
// window state (fold.SharedState: first unfinished offset, per message its
// state, delivery count, lock holder and deadline, and the counters) in
// its last message's Tg-Shared header. Every state message is a rollup of
// its subject (Nats-Rollup: sub), so the stream keeps one per partition,
// like a KV bucket, and the fold, which reads headers only, always has
// every partition's state without fetching anything. A header rather than
// the payload: the fold gets it for free, and a window of at most
// sharedcore.DefaultWindow entries encodes in a few KB (20 KB with every
// message locked), far below a message's limit.
//
// Tg-Gen names the consumer's generation: the catalog sequence of the
// record that made it a shared consumer. A consumer dropped (or turned
// into a streaming one) and created again starts over: the fold ignores a
// state of another generation, but keeps its sequence, which the next
// state message must expect. Tg-Freed marks a state message whose step may
// have made a message available (sharedcore.Core.Freed, or the window
// moved on while full): the fold, which sees every gateway's messages,
// wakes the consumer's waiters on every gateway then (no polling).
//
// Besides the state, each gateway caches per consumer and partition the
// metadata of the window's messages (written_at, delay, group, size: the
// core needs them, the fold does not have them), filled by jetstream/queue
// with Scan before a step. The cache is the gateway's own, and only a
// cache: a gateway that starts rebuilds it from the stream.

// shWindow is each partition's acquisition window.
func (s *Store) shWindow() int64 {
	if s.shWin > 0 {
		return int64(s.shWin)
	}
	return sharedcore.DefaultWindow
}

// newHolderGateway picks a random non-zero gateway id.
func newHolderGateway() uint64 {
	var b [8]byte
	for {
		_, _ = rand.Read(b[:])
		if id := binary.BigEndian.Uint64(b[:]); id != 0 {
			return id
		}
	}
}

// sharedCASBroken counts and reports a shared-consumer state the stream
// stored over one it did not expect (a fold hook).
func (s *Store) sharedCASBroken(subject string, seq, expected, folded uint64) {
	s.casBroken.Add(1)
	slog.Error("the stream stored a shared-consumer state over one it did not expect", "subject", subject,
		"seq", seq, "expected", expected, "folded", folded)
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
