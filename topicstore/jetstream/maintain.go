package jetstream

import (
	"topicgate/topicstore/jetstream/fold"

	"context"
	"strconv"
	"sync"
	"time"
	"topicgate/topicstore"
	"topicgate/topicstore/jetstream/jsext"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"
)

// Maintenance: retention and the sweep of dead gateways' staged chunks
// (sweep.go) run on one gateway at a time, the holder of a
// lease kept in the stream (subject <prefix>.l): a message naming the
// holder and the time it holds it until. A gateway takes the lease when
// it is free or expired and its holder renews it, each a publish
// conditional on the subject's last sequence, so two gateways never both
// believe they hold it; one that dies stops renewing, and the next takes
// over once the lease expires. (Splits need no lease: see autoSplit.)

// maintain runs until Close: every interval (or half the shortest
// retention period, when shorter: topicstore.RetentionEvery) it settles
// this gateway's outcomes in doubt, purges its chain, and takes or renews
// the lease and, holding it, applies retention, aborts the wide
// transactions of dead gateways, sweeps their staged chunks, takes a
// snapshot when one is due and retires wide transactions' decisions. Every
// failure is logged and counted (ClusterStats), none stops the loop.
func (s *Store) maintain(interval time.Duration) {
	defer s.wg.Done()
	every := s.maintainEvery(interval)
	timer := time.NewTimer(every)
	defer timer.Stop()
	for {
		select {
		case <-s.done:
			return
		case <-timer.C:
		}
		ctx := context.Background()
		s.settleDoubts(ctx, false)
		s.settleWide(ctx)
		s.purgeChain(ctx)
		s.forgetDrops(s.opts.Clock())
		every = s.maintainEvery(interval)
		held, err := s.takeLease(3 * every)
		if err != nil {
			s.maintenanceFailed("maintenance lease", err)
		}
		if held {
			if _, err := s.RunRetention(ctx, s.opts.Clock()); err != nil {
				s.maintenanceFailed("retention", err)
			} else {
				s.maint.set(func(m *maintState) { m.lastRetention = s.opts.Clock() })
			}
			s.abortDead()
			if _, err := s.sweepStaged(ctx); err != nil {
				s.maintenanceFailed("sweep of staged chunks", err)
			} else {
				s.maint.set(func(m *maintState) { m.lastSweep = s.opts.Clock() })
			}
			if err := s.maybeSnapshot(ctx); err != nil {
				s.maintenanceFailed("snapshot of the fold", err)
			}
			if _, err := s.retireDecisions(ctx, s.opts.Clock()); err != nil {
				s.maintenanceFailed("retiring wide transactions' decisions", err)
			}
		}
		timer.Reset(every)
	}
}

// maintainEvery is how often maintain runs now.
func (s *Store) maintainEvery(interval time.Duration) time.Duration {
	s.mu.Lock()
	cfgs := make([]topicstore.TopicConfig, 0, len(s.fold.ByName))
	for _, t := range s.fold.ByName {
		cfgs = append(cfgs, t.Rec.Config)
	}
	s.mu.Unlock()
	return topicstore.RetentionEvery(interval, cfgs)
}

// maintState is what this gateway's maintenance did last, for
// ClusterStats.
type maintState struct {
	mu                       sync.Mutex
	lastRetention, lastSweep time.Time
	lastErr                  string
}

func (m *maintState) set(f func(*maintState)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	f(m)
}

// maintenanceFailed logs and counts a maintenance run that failed.
func (s *Store) maintenanceFailed(what string, err error) {
	s.maintenanceErrors.Add(1)
	s.maint.set(func(m *maintState) { m.lastErr = what + ": " + err.Error() })
	s.opts.Logger.Warn("maintenance failed", "gateway", s.stage.gw, "what", what, "err", err)
}

// takeLease takes or renews the maintenance lease for d and reports
// whether this gateway holds it; an error is a failure to ask (the
// cluster did not answer), not another gateway holding it.
func (s *Store) takeLease(d time.Duration) (bool, error) {
	now := s.opts.Clock()
	s.mu.Lock()
	l := s.fold.Lease
	s.mu.Unlock()
	if l.Holder != "" && l.Holder != s.stage.gw && now.Before(l.Until) {
		return false, nil // another gateway holds it
	}
	m := nats.NewMsg(s.subj.Of(fold.KindLease))
	m.Header.Set(fold.HHolder, s.stage.gw)
	m.Header.Set(fold.HUntil, strconv.FormatInt(now.Add(d).UnixMicro(), 10))
	jsext.Expect(m, l.Seq)
	m.Header.Set(natsjs.MsgRollup, natsjs.MsgRollupSubject) // the lease is its last message
	ctx, cancel := s.request(context.Background())
	defer cancel()
	seq, err := s.io.publish(ctx, m)
	if err != nil {
		if jsext.ErrorCode(err) == jsext.ErrCodeWrongLastSequence {
			return false, nil // taken or renewed by another meanwhile
		}
		return false, s.unavailable(err)
	}
	if err := s.io.waitApplied(context.Background(), seq); err != nil {
		return false, err
	}
	return true, nil
}
