package jetstream

import (
	"context"
	"strconv"
	"time"

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

// leaseState is the maintenance lease as the fold saw it last.
type leaseState struct {
	seq    uint64
	holder string
	until  time.Time
}

// maintain runs until Close: every interval it takes or renews the lease
// and, holding it, applies retention and sweeps staged chunks.
func (s *Store) maintain(interval time.Duration) {
	defer s.wg.Done()
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-s.done:
			return
		case <-tick.C:
		}
		ctx := context.Background()
		s.settleDoubts(ctx, false)
		s.settleWide(ctx)
		s.purgeChain(ctx)
		if s.takeLease(3 * interval) {
			if _, err := s.RunRetention(ctx, s.opts.Clock()); err != nil {
				s.maintenanceFailed("retention", err)
			}
			s.abortDead()
			if _, err := s.sweepStaged(ctx); err != nil {
				s.maintenanceFailed("sweep of staged chunks", err)
			}
		}
	}
}

// maintenanceFailed logs and counts a maintenance run that failed.
func (s *Store) maintenanceFailed(what string, err error) {
	s.maintenanceErrors.Add(1)
	s.opts.Logger.Warn("maintenance failed", "gateway", s.stage.gw, "what", what, "err", err)
}

// takeLease takes or renews the maintenance lease for d and reports
// whether this gateway holds it.
func (s *Store) takeLease(d time.Duration) bool {
	now := s.opts.Clock()
	s.mu.Lock()
	l := s.lease
	s.mu.Unlock()
	if l.holder != "" && l.holder != s.stage.gw && now.Before(l.until) {
		return false // another gateway holds it
	}
	m := nats.NewMsg(s.prefix + ".l")
	m.Header.Set(hHolder, s.stage.gw)
	m.Header.Set(hUntil, strconv.FormatInt(now.Add(d).UnixMicro(), 10))
	expect(m, l.seq)
	m.Header.Set(natsjs.MsgRollup, natsjs.MsgRollupSubject) // the lease is its last message
	ctx, cancel := s.request(context.Background())
	defer cancel()
	ack, err := s.js.PublishMsg(ctx, m)
	if err != nil {
		return false // taken by another meanwhile, or the cluster is down
	}
	return s.waitApplied(context.Background(), ack.Sequence) == nil
}
