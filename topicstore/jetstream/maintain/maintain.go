package maintain

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"

	"topicgate/topicstore"
	"topicgate/topicstore/jetstream/fold"
)

// Host is what maintenance needs of the store that runs it.
type Host interface {
	// Lock and Unlock are the store's lock: the fold's state (Config.Fold)
	// is read only under it.
	sync.Locker
	// Publish publishes m, conditional as its headers say, and returns
	// its stream sequence.
	Publish(ctx context.Context, m *nats.Msg) (uint64, error)
	// WaitApplied blocks until the fold has applied seq; it fails with
	// topicstore.ErrUnavailable when that takes longer than the store's
	// timeout.
	WaitApplied(ctx context.Context, seq uint64) error
	// DeleteMsg deletes message seq; one already gone is no error.
	DeleteMsg(ctx context.Context, seq uint64) error
	// Unavailable wraps a cluster error so that the caller can tell it
	// apart (topicstore.ErrUnavailable).
	Unavailable(err error) error
}

// Jobs are the store's parts of a maintenance run.
type Jobs interface {
	// Settle is every gateway's part of each run: it settles this
	// gateway's outcomes in doubt and wide transactions, purges its chain
	// and forgets dropped topics.
	Settle(ctx context.Context)
	// Retention applies retention.
	Retention(ctx context.Context, now time.Time) error
	// AbortDead aborts the wide transactions of every gateway whose
	// heartbeat expired.
	AbortDead()
	// Snapshot takes a snapshot of the fold when one is due.
	Snapshot(ctx context.Context) error
	// RetireDecisions retires wide transactions' decisions.
	RetireDecisions(ctx context.Context, now time.Time) error
}

// Config is what maintenance knows of its gateway.
type Config struct {
	Gateway  string           // this gateway's id
	Subjects fold.Subjects    // the stream's subjects
	Clock    func() time.Time // the store's clock
	Timeout  time.Duration    // bounds each request to the cluster
	// TTL is how long a gateway's heartbeat outlives its last renewal
	// (jetstream/groups): the sweep's grace.
	TTL    time.Duration
	Fold   *fold.State // the store's fold, under the host's lock
	Logger *slog.Logger
}

// Maintenance is a gateway's maintenance.
type Maintenance struct {
	cfg    Config
	host   Host
	jobs   Jobs
	errors atomic.Int64 // runs that failed

	mu                       sync.Mutex
	lastRetention, lastSweep time.Time
	lastErr                  string
}

// New returns a gateway's maintenance; the store runs Run.
func New(cfg Config, host Host, jobs Jobs) *Maintenance {
	return &Maintenance{cfg: cfg, host: host, jobs: jobs}
}

// request returns a context bounded by the store's timeout.
func (m *Maintenance) request(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, m.cfg.Timeout)
}

// Run runs until done is closed: every interval (or half the shortest
// retention period, when shorter: topicstore.RetentionEvery) it settles
// this gateway's outcomes in doubt, purges its chain, and takes or renews
// the lease and, holding it, applies retention, aborts the wide
// transactions of dead gateways, sweeps their staged chunks, takes a
// snapshot when one is due and retires wide transactions' decisions. Every
// failure is logged and counted (Stats), none stops the loop.
func (m *Maintenance) Run(done <-chan struct{}, interval time.Duration) {
	every := m.every(interval)
	timer := time.NewTimer(every)
	defer timer.Stop()
	for {
		select {
		case <-done:
			return
		case <-timer.C:
		}
		ctx := context.Background()
		m.jobs.Settle(ctx)
		every = m.every(interval)
		held, err := m.TakeLease(3 * every)
		if err != nil {
			m.failed("maintenance lease", err)
		}
		if held {
			if err := m.jobs.Retention(ctx, m.cfg.Clock()); err != nil {
				m.failed("retention", err)
			} else {
				m.set(func(x *Maintenance) { x.lastRetention = m.cfg.Clock() })
			}
			m.jobs.AbortDead()
			if _, err := m.Sweep(ctx); err != nil {
				m.failed("sweep of staged chunks", err)
			} else {
				m.set(func(x *Maintenance) { x.lastSweep = m.cfg.Clock() })
			}
			if err := m.jobs.Snapshot(ctx); err != nil {
				m.failed("snapshot of the fold", err)
			}
			if err := m.jobs.RetireDecisions(ctx, m.cfg.Clock()); err != nil {
				m.failed("retiring wide transactions' decisions", err)
			}
		}
		timer.Reset(every)
	}
}

// every is how often Run runs now.
func (m *Maintenance) every(interval time.Duration) time.Duration {
	m.host.Lock()
	cfgs := make([]topicstore.TopicConfig, 0, len(m.cfg.Fold.ByName))
	for _, t := range m.cfg.Fold.ByName {
		cfgs = append(cfgs, t.Rec.Config)
	}
	m.host.Unlock()
	return topicstore.RetentionEvery(interval, cfgs)
}

func (m *Maintenance) set(f func(*Maintenance)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	f(m)
}

// failed logs and counts a maintenance run that failed.
func (m *Maintenance) failed(what string, err error) {
	m.errors.Add(1)
	m.set(func(x *Maintenance) { x.lastErr = what + ": " + err.Error() })
	m.cfg.Logger.Warn("maintenance failed", "gateway", m.cfg.Gateway, "what", what, "err", err)
}

// Errors is how many maintenance runs failed.
func (m *Maintenance) Errors() int64 { return m.errors.Load() }

// Last is what this gateway's maintenance did last: when it applied
// retention, when it swept, and its last failure.
func (m *Maintenance) Last() (lastRetention, lastSweep time.Time, lastErr string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.lastRetention, m.lastSweep, m.lastErr
}
