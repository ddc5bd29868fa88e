package jetstream

import (
	"context"
	"errors"
	"time"
	"topicgate/topicstore/jetstream/jsext"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"
)

// clusterIO is everything the commit protocol does to the cluster and
// waits for from the fold: the committer (committer.go), staging
// (stage.go) and, through host.go, resolution (jetstream/chain), wide
// transactions (jetstream/wide), read-session groups (jetstream/groups)
// and maintenance (jetstream/maintain: the lease, the sweep) do their
// I/O through it and nothing else. A running
// gateway's is natsIO; the deterministic simulation (sim_test.go) gives
// each simulated gateway one that hands every call to a seeded scheduler,
// which answers from an in-memory stream, so that the same protocol code
// runs against the real cluster and against every interleaving of faults
// the scheduler draws. No call is made under s.mu.
type clusterIO interface {
	// now is the time deadlines are measured by.
	now() time.Time
	// publishBatch publishes msgs as one atomic batch (jsext.PublishAtomic).
	publishBatch(ctx context.Context, msgs []*nats.Msg) (*jsext.BatchAck, error)
	// publish publishes one message and returns its stream sequence.
	publish(ctx context.Context, m *nats.Msg) (uint64, error)
	// publishAll publishes msgs, each on its own, without waiting for one
	// ack before the next publish, and returns their sequences.
	publishAll(ctx context.Context, msgs []*nats.Msg) ([]uint64, error)
	// getMsg returns the payload of message seq.
	getMsg(ctx context.Context, seq uint64) ([]byte, error)
	// getRecord returns the payload of record batch message seq, which
	// the fold holds: asked again while the stream cannot answer
	// (reads.Reads.Record past its cache; fetch.go).
	getRecord(ctx context.Context, seq uint64) ([]byte, error)
	// purge deletes the messages on subject (a filter: wildcards allowed)
	// below sequence below; 0: all of them.
	purge(ctx context.Context, subject string, below uint64) error
	// lastFor returns the last message on subject: its sequence and
	// headers, or 0 when the subject holds none.
	lastFor(ctx context.Context, subject string) (uint64, nats.Header, error)
	// lastOnLeader returns the last message on subject as the stream's
	// leader has it (every message it acknowledged): its sequence,
	// headers and data, or 0 when the subject holds none.
	lastOnLeader(ctx context.Context, subject string) (uint64, nats.Header, []byte, error)
	// deleteMsg deletes message seq; one already gone is no error.
	deleteMsg(ctx context.Context, seq uint64) error
	// waitApplied blocks until the fold has applied seq; it fails with
	// ErrUnavailable when that takes longer than the store's timeout.
	waitApplied(ctx context.Context, seq uint64) error
	// waitAdvance blocks until the fold applies a message past from, d
	// passes or the store closes.
	waitAdvance(from uint64, d time.Duration)
	// sync waits until the fold has applied the stream's last message.
	sync(ctx context.Context) error
}

// natsIO is a running gateway's clusterIO: its NATS connections and fold.
type natsIO struct{ s *Store }

func (n natsIO) now() time.Time { return time.Now() }

func (n natsIO) publishBatch(ctx context.Context, msgs []*nats.Msg) (*jsext.BatchAck, error) {
	s := n.s
	nc := s.leaders.Conn(s.nc)
	ack, err := jsext.PublishAtomic(ctx, nc, msgs)
	if err != nil && nc != s.nc && jsext.ErrorCode(err) == 0 {
		// The leader's connection failed it, not the stream (its node
		// went, the leader moved, a timeout): the store's own connection
		// takes the next. A refusal (a wrong last sequence, 10071/10164)
		// came from the leader: it stays.
		s.leaders.Forget()
	}
	return ack, err
}

func (n natsIO) publish(ctx context.Context, m *nats.Msg) (uint64, error) {
	ack, err := n.s.js.PublishMsg(ctx, m)
	if err != nil {
		return 0, err
	}
	return ack.Sequence, nil
}

func (n natsIO) publishAll(ctx context.Context, msgs []*nats.Msg) ([]uint64, error) {
	futures := make([]natsjs.PubAckFuture, 0, len(msgs))
	for _, m := range msgs {
		f, err := n.s.js.PublishMsgAsync(m)
		if err != nil {
			return nil, err
		}
		futures = append(futures, f)
	}
	seqs := make([]uint64, len(futures))
	for i, f := range futures {
		select {
		case ack := <-f.Ok():
			seqs[i] = ack.Sequence
		case err := <-f.Err():
			return nil, err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return seqs, nil
}

func (n natsIO) getRecord(ctx context.Context, seq uint64) ([]byte, error) {
	return n.s.fetchRecordBatch(ctx, seq)
}

func (n natsIO) getMsg(ctx context.Context, seq uint64) ([]byte, error) {
	raw, err := n.s.stream.GetMsg(ctx, seq)
	if err != nil {
		return nil, err
	}
	return raw.Data, nil
}

func (n natsIO) purge(ctx context.Context, subject string, below uint64) error {
	opts := []natsjs.StreamPurgeOpt{natsjs.WithPurgeSubject(subject)}
	if below > 0 {
		opts = append(opts, natsjs.WithPurgeSequence(below))
	}
	return n.s.stream.Purge(ctx, opts...)
}

func (n natsIO) lastFor(ctx context.Context, subject string) (uint64, nats.Header, error) {
	msg, err := n.s.stream.GetLastMsgForSubject(ctx, subject)
	if errors.Is(err, natsjs.ErrMsgNotFound) {
		return 0, nil, nil
	}
	if err != nil {
		return 0, nil, err
	}
	return msg.Sequence, msg.Header, nil
}

func (n natsIO) lastOnLeader(ctx context.Context, subject string) (uint64, nats.Header, []byte, error) {
	seq, h, data, err := n.s.leaderMsg(ctx, map[string]any{"last_by_subj": subject})
	if errors.Is(err, natsjs.ErrMsgNotFound) {
		return 0, nil, nil, nil
	}
	return seq, h, data, err
}

func (n natsIO) deleteMsg(ctx context.Context, seq uint64) error {
	err := n.s.stream.DeleteMsg(ctx, seq)
	if errors.Is(err, natsjs.ErrMsgNotFound) {
		return nil
	}
	return err
}

func (n natsIO) waitApplied(ctx context.Context, seq uint64) error { return n.s.waitApplied(ctx, seq) }

func (n natsIO) waitAdvance(from uint64, d time.Duration) { n.s.waitAdvance(from, d) }

func (n natsIO) sync(ctx context.Context) error { return n.s.sync(ctx) }
