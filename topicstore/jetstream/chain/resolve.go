package chain

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"

	"topicgate/topicstore"
	"topicgate/topicstore/jetstream/fold"
	"topicgate/topicstore/jetstream/jsext"
	"topicgate/topicstore/jetstream/plan"
)

// Host is what the chain needs of the store.
type Host interface {
	// Lock and Unlock are the store's lock: the State, its doubts and the
	// fold's state (Config.Fold) are read and changed only under it.
	sync.Locker
	// Closed reports, under the lock, whether the store is closed.
	Closed() bool
	// Now is the time deadlines are measured by.
	Now() time.Time
	// Publish publishes m, conditional as its headers say, and returns
	// its stream sequence.
	Publish(ctx context.Context, m *nats.Msg) (uint64, error)
	// PublishBatch publishes msgs as one atomic batch, conditional as
	// their headers say.
	PublishBatch(ctx context.Context, msgs []*nats.Msg) (*jsext.BatchAck, error)
	// WaitApplied blocks until the fold has applied seq; it fails with
	// topicstore.ErrUnavailable when that takes longer than the store's
	// timeout.
	WaitApplied(ctx context.Context, seq uint64) error
	// Purge deletes the messages on subject below sequence below.
	Purge(ctx context.Context, subject string, below uint64) error
	// Backoff waits before the attempt+1st try after an answer that said
	// nothing was decided (the committer's back-off).
	Backoff(attempt int)
	// NoLeader reports whether a publish found no node to take it: the
	// stream has no leader this moment, or no node is up.
	NoLeader(err error) bool
	// Unavailable wraps a cluster error so that the caller can tell it
	// apart (topicstore.ErrUnavailable).
	Unavailable(err error) error
	// SettleStagings settles the stagings txns of a batch the fold
	// decided: committed, they are the store's now (the records that
	// reference them keep their chunks); else they are open again and
	// deleted.
	SettleStagings(txns []uint64, committed bool)
}

// Config is what the chain knows of its gateway.
type Config struct {
	Gateway  string           // this gateway's id: its chain's subject, its resolutions' Tg-Resolve
	Subjects fold.Subjects    // the stream's subjects
	Fold     *fold.State      // the fold's state, read under the host's lock
	Clock    func() time.Time // stamps a resolution's record batch
	Timeout  time.Duration    // bounds each request to the cluster
	URLs     []string         // the cluster's nodes, named (redacted) in ErrOutcome's answer
	Logger   *slog.Logger     // told of a batch whose outcome is lost
}

// Chain is this gateway's chain at work: the bookkeeping of its batches
// in doubt (State) and what decides and settles them over the cluster
// (doc.go tells the protocol).
type Chain struct {
	// State is the bookkeeping of the batches in doubt, under the host's
	// lock.
	State
	cfg     Config
	h       Host
	doubted atomic.Int64 // batches whose answer never came
}

// New returns this gateway's chain.
func New(cfg Config, h Host) *Chain { return &Chain{cfg: cfg, h: h} }

// Doubted returns how many batches this gateway published whose answer
// never came.
func (c *Chain) Doubted() int64 { return c.doubted.Load() }

// Mark registers a batch of n messages and returns its first message:
// the marker linking it to this gateway's chain as its fold has it
// (State.Marker). It runs under the host's lock.
func (c *Chain) Mark(n int, txns []uint64) (*nats.Msg, *Doubt) {
	return c.Marker(c.cfg.Subjects.Chain(c.cfg.Gateway), c.cfg.Fold.ChainLast(c.cfg.Gateway), n, txns)
}

// Outcome is what the store knows of a batch it published.
type Outcome uint8

const (
	Stored    Outcome = iota + 1 // the stream stored it (ack, or resolved)
	NotStored                    // it is not stored and never will be
	Refused                      // the stream refused it (an expectation, a limit): not stored
	Unknown                      // in doubt past the deadline
)

// PublishResolved publishes a planned batch whose witness is d's and
// returns what became of it: with its last sequence if it was stored;
// the refusal or the reason if not. A batch whose ack does not come is
// resolved (resolve) until deadline; one still in doubt then is Unknown,
// and d stays registered for the fold to decide.
func (c *Chain) PublishResolved(msgs []*nats.Msg, d *Doubt, deadline time.Time) (Outcome, uint64, error) {
	ctx, cancel := c.requestUntil(deadline)
	ack, err := c.h.PublishBatch(ctx, msgs)
	cancel()
	switch {
	case err == nil:
		c.SettleOwn(d)
		return Stored, ack.Sequence, nil
	case jsext.ErrorCode(err) != 0:
		c.SettleOwn(d)
		return Refused, 0, err
	case errors.Is(err, jsext.ErrBatchNotSent) || c.h.NoLeader(err):
		// The commit message never reached a leader: nothing stored.
		c.SettleOwn(d)
		return NotStored, 0, c.h.Unavailable(err)
	}
	// The commit message left and no answer came.
	c.doubted.Add(1)
	o, last, rerr := c.resolve(d, deadline)
	if o == Unknown {
		return Unknown, 0, fmt.Errorf("%v, then %v", err, rerr)
	}
	c.SettleOwn(d)
	if o == NotStored {
		return NotStored, 0, c.h.Unavailable(err)
	}
	return o, last, nil
}

// SettleOwn forgets a doubt the store settled itself: its batch's answer
// came, or it was resolved, or it was never published. It takes the
// host's lock.
func (c *Chain) SettleOwn(d *Doubt) {
	c.h.Lock()
	c.Forget(d)
	c.h.Unlock()
}

// resolve learns whether the batch of d, whose answer never came, was
// stored, and if so its last sequence. It returns Unknown when the
// cluster did not let it learn before deadline (or the store closed).
func (c *Chain) resolve(d *Doubt, deadline time.Time) (Outcome, uint64, error) {
	var last error
	for attempt := 0; ; attempt++ {
		c.h.Lock()
		at, dead, lost, closed := d.At, d.Dead, d.Lost, c.h.Closed()
		c.h.Unlock()
		switch {
		case at != 0:
			return Stored, d.Last(), nil
		case dead:
			return NotStored, 0, nil
		case lost:
			return Unknown, 0, errors.New("this gateway's fold missed what followed the batch on its chain")
		case closed:
			return Unknown, 0, topicstore.ErrClosed
		case !c.h.Now().Before(deadline):
			if last == nil {
				last = errors.New("no attempt to resolve it was answered")
			}
			return Unknown, 0, last
		}
		m := c.resolution(d)
		ctx, cancel := c.requestUntil(deadline)
		_, err := c.h.Publish(ctx, m)
		cancel()
		switch code := jsext.ErrorCode(err); {
		case err == nil:
			// The resolution follows d.prev: the batch can never be stored.
			c.h.Lock()
			if !d.Decided() {
				d.Dead = true
			}
			c.h.Unlock()
			continue
		case code == jsext.ErrCodeWrongLastSequence:
			// Something follows d.prev (the batch, or an earlier
			// resolution whose answer was lost): the fold tells which.
			if n, ok := jsext.WrongLast(err); ok {
				ctx, cancel := c.requestUntil(deadline)
				last = c.h.WaitApplied(ctx, n)
				cancel()
				continue
			}
			last = err
		default:
			// 10164: a publish to the chain is still being proposed (the
			// batch itself, maybe); a timeout, no leader: ask again.
			last = err
		}
		c.h.Backoff(attempt)
	}
}

// resolution is what resolve publishes for d: a message on its witness's
// subject expecting the witness's predecessor that changes nothing: a
// link of the chain; a record batch of no messages at the partition's end
// (its base is the fold's end: the subject has not changed since prev,
// else the resolution is refused); a shared-consumer state of no
// generation, which the fold ignores but for its sequence.
func (c *Chain) resolution(d *Doubt) *nats.Msg {
	m := nats.NewMsg(d.Subject)
	m.Header.Set(fold.HResolve, c.cfg.Gateway+" "+strconv.FormatUint(d.ID, 10))
	jsext.Expect(m, d.Prev)
	if d.Marker {
		m.Header.Set(fold.HPrev, strconv.FormatUint(d.Prev, 10))
		return m
	}
	tok := c.cfg.Subjects.Tokens(d.Subject)
	if len(tok) > 0 && tok[0] == fold.KindShared {
		// A shared-consumer state of no generation: the fold takes only
		// its sequence, the state stays the one before it.
		m.Header.Set(fold.HGen, "0")
		return m
	}
	var base, cum int64
	c.h.Lock()
	if len(tok) == 3 {
		id, _ := strconv.ParseUint(tok[1], 10, 64)
		p, _ := strconv.Atoi(tok[2])
		if t := c.cfg.Fold.ByID[id]; t != nil && p < len(t.Parts) {
			base, cum = t.Parts[p].End, t.Parts[p].Bytes
		}
	}
	c.h.Unlock()
	at := c.cfg.Clock().UnixMicro()
	rec := make([]byte, topicstore.BatchHeaderLen)
	topicstore.PutBatchHeader(rec, topicstore.BatchHeader{Base: base, Count: 0, WrittenAt: at, CRC: topicstore.Checksum(nil)})
	m.Data = rec
	plan.RecordHeaders(m, c.cfg.Gateway, base, 0, at, 0, cum, 0)
	return m
}

// requestUntil is a request's context: the store's timeout, cut short by
// deadline.
func (c *Chain) requestUntil(deadline time.Time) (context.Context, context.CancelFunc) {
	d := min(c.cfg.Timeout, deadline.Sub(c.h.Now()))
	return context.WithTimeout(context.Background(), max(d, time.Millisecond))
}

// ErrOutcome builds the answer to the requests of a batch left in doubt,
// deadline after they were planned.
func (c *Chain) ErrOutcome(d *Doubt, deadline time.Duration, cause error) error {
	return fmt.Errorf("%w: the NATS cluster (%s) received the commit (batch %d of gateway %s) and did not tell within %v whether it stored it (%v); it is stored whole or not at all",
		topicstore.ErrOutcomeUnknown, jsext.RedactURLs(c.cfg.URLs), d.ID, c.cfg.Gateway, deadline.Round(time.Millisecond), cause)
}
