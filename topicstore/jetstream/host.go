package jetstream

import (
	"context"
	"time"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"

	"topicgate/topicstore/jetstream/groups"
	"topicgate/topicstore/jetstream/jsext"
	"topicgate/topicstore/jetstream/maintain"
	"topicgate/topicstore/jetstream/reads"
	"topicgate/topicstore/jetstream/retain"
	"topicgate/topicstore/jetstream/route"
	"topicgate/topicstore/jetstream/snapshot"
	"topicgate/topicstore/jetstream/wide"
)

// host is what the rooms that run beside the commit protocol need of the
// Store, each room saying what it needs as its own interface (groups.Host):
// the store's lock, under which they read and change the fold's state,
// and its cluster I/O, so that they publish, conditionally, and wait for
// the fold the way the commit protocol does: through s.io (io.go), which
// the simulation (sim_test.go) replaces with its scheduler's.
type host struct{ s *Store }

var _ groups.Host = host{}

func (h host) Lock()   { h.s.mu.Lock() }
func (h host) Unlock() { h.s.mu.Unlock() }

// Closed runs under the lock.
func (h host) Closed() bool { return h.s.closed }

func (h host) Connected() bool { return h.s.nc.IsConnected() }

func (h host) Publish(ctx context.Context, m *nats.Msg) (uint64, error) {
	return h.s.io.publish(ctx, m)
}

func (h host) LastFor(ctx context.Context, subject string) (uint64, nats.Header, error) {
	return h.s.io.lastFor(ctx, subject)
}

func (h host) Purge(ctx context.Context, subject string, below uint64) error {
	return h.s.io.purge(ctx, subject, below)
}

var _ route.Host = host{}

func (h host) StreamLeader() string {
	ctx, cancel := h.s.request(context.Background())
	defer cancel()
	if info, err := h.s.stream.Info(ctx); err == nil && info.Cluster != nil {
		return info.Cluster.Leader
	}
	return ""
}

var _ snapshot.Host = host{}

// Applied runs under the lock.
func (h host) Applied() uint64 { return h.s.applied }

// SetApplied runs under the lock.
func (h host) SetApplied(seq uint64) { h.s.applied = seq }

func (h host) FoldAt(seq uint64, subject string, hd nats.Header, ts time.Time) {
	h.s.foldAt(seq, subject, hd, ts, false)
}

func (h host) JetStream() natsjs.JetStream { return h.s.js }

func (h host) Stream() natsjs.Stream { return h.s.stream }

var _ reads.Host = host{}

func (h host) GetRecord(ctx context.Context, seq uint64) ([]byte, error) {
	return h.s.io.getRecord(ctx, seq)
}

var _ retain.Host = host{}

func (h host) PublishBatch(ctx context.Context, msgs []*nats.Msg) (*jsext.BatchAck, error) {
	return h.s.io.publishBatch(ctx, msgs)
}

var _ wide.Host = host{}

var _ maintain.Host = host{}

func (h host) WaitApplied(ctx context.Context, seq uint64) error { return h.s.io.waitApplied(ctx, seq) }

func (h host) DeleteMsg(ctx context.Context, seq uint64) error { return h.s.io.deleteMsg(ctx, seq) }

func (h host) Unavailable(err error) error { return h.s.unavailable(err) }

// maintJobs are the store's parts of a maintenance run (maintain.Jobs).
type maintJobs struct{ s *Store }

var _ maintain.Jobs = maintJobs{}

func (j maintJobs) Settle(ctx context.Context) {
	s := j.s
	s.chain.Settle(ctx, false)
	s.wide.Settle(ctx)
	s.chain.Purge(ctx)
	s.catalog.ForgetDrops(s.opts.Clock())
}

func (j maintJobs) Retention(ctx context.Context, now time.Time) error {
	_, err := j.s.RunRetention(ctx, now)
	return err
}

func (j maintJobs) AbortDead() { j.s.wide.AbortDead() }

func (j maintJobs) Snapshot(ctx context.Context) error { return j.s.snap.Maybe(ctx) }

func (j maintJobs) RetireDecisions(ctx context.Context, now time.Time) error {
	_, err := j.s.retire.Run(ctx, now)
	return err
}
