package kafka

import (
	"context"
	"errors"
	"slices"
	"time"

	"topicgate/topicstore"
)

// Offsets retention. A consumer the door created for a group (Origin
// "kafka") records when the group last committed to it (UsedAt, renewed
// at most every touchEvery, so an active group costs one topic change per
// topic that often); a group's consumers unused for Config.OffsetsRetention
// and with no members are dropped, as Kafka drops the offsets of a group
// empty for offsets.retention.minutes. Consumers made in SQL are never
// dropped: they belong to the statement that made them.

// DefaultOffsetsRetention is Kafka's offsets.retention.minutes (7 days).
const DefaultOffsetsRetention = 7 * 24 * time.Hour

// originKafka marks the consumers the door created.
const originKafka = "kafka"

// retention is the offsets retention in force (0: never).
func (s *Server) retention() time.Duration {
	switch r := s.cfg.OffsetsRetention; {
	case r < 0:
		return 0
	case r == 0:
		return DefaultOffsetsRetention
	default:
		return r
	}
}

// touchEvery is how stale a use mark may get before a commit renews it:
// a tenth of the retention, at most an hour.
func (s *Server) touchEvery() time.Duration { return min(s.retention()/10, time.Hour) }

// touchGroup renews the use mark of group's consumer of topic (info as
// the commit saw it) when it is older than touchEvery. A failure is
// logged: the commit it follows stands, and the next renews it.
func (s *Server) touchGroup(ctx context.Context, info *topicstore.TopicInfo, group string, now time.Time) {
	cc := consumerConfig(info, group)
	if cc == nil || cc.Origin != originKafka || s.retention() == 0 || now.Sub(cc.UsedAt) < s.touchEvery() {
		return
	}
	err := s.cfg.Store.AlterTopic(ctx, info.Config.Name, func(cfg *topicstore.TopicConfig) error {
		for i := range cfg.Consumers {
			if c := &cfg.Consumers[i]; c.Name == group && c.Origin == originKafka {
				c.UsedAt = now
				return nil
			}
		}
		return topicstore.ErrConsumerNotFound
	})
	if err != nil && !errors.Is(err, topicstore.ErrConsumerNotFound) {
		s.log.Warn("kafka: renewing a group's use mark", "group", group, "topic", info.Config.Name, "err", err)
	}
}

// ExpireGroups drops, as of now, every consumer the door created for a
// group that was not used for the offsets retention and whose group has
// no members, and returns how many it dropped. The server runs it every
// touchEvery; tests call it with a time of their own. On a cluster every
// gateway runs it: a consumer another gateway dropped first is skipped.
func (s *Server) ExpireGroups(ctx context.Context, now time.Time) (int, error) {
	keep := s.retention()
	if keep == 0 {
		return 0, nil
	}
	dropped := 0
	for _, info := range s.cfg.Store.Topics() {
		for _, cc := range info.Config.Consumers {
			if cc.Origin != originKafka || now.Sub(cc.UsedAt) < keep {
				continue
			}
			if rep := s.route.call(ctx, &groupCall{Op: "subscribed", Group: cc.Name}); rep.Code != 0 || rep.Live {
				continue // members, or a coordinator that cannot say: not now
			}
			err := s.cfg.Store.AlterTopic(ctx, info.Config.Name, func(cfg *topicstore.TopicConfig) error {
				i := slices.IndexFunc(cfg.Consumers, func(c topicstore.ConsumerConfig) bool {
					return c.Name == cc.Name && c.Origin == originKafka && now.Sub(c.UsedAt) >= keep
				})
				if i < 0 {
					return topicstore.ErrConsumerNotFound
				}
				cfg.Consumers = slices.Delete(cfg.Consumers, i, i+1)
				return nil
			})
			switch {
			case err == nil:
				dropped++
				s.log.Info("kafka: dropped an unused group's consumer", "group", cc.Name, "topic", info.Config.Name,
					"unused_since", cc.UsedAt)
			case errors.Is(err, topicstore.ErrConsumerNotFound), errors.Is(err, topicstore.ErrTopicNotFound):
			default:
				return dropped, err
			}
		}
	}
	return dropped, nil
}

// expireLoop runs ExpireGroups every touchEvery until the server closes.
func (s *Server) expireLoop() {
	every := s.touchEvery()
	if every <= 0 {
		return
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-s.ctx.Done():
			return
		case now := <-t.C:
			if _, err := s.ExpireGroups(s.ctx, now); err != nil && s.ctx.Err() == nil {
				s.log.Warn("kafka: expiring unused groups", "err", err)
			}
		}
	}
}

// groupSweepEvery is how often a gateway loads the stored groups it
// coordinates and does not hold (sweepGroupDocs).
const groupSweepEvery = time.Minute

// sweepLoop runs sweepGroupDocs every groupSweepEvery until the server
// closes.
func (s *Server) sweepLoop() {
	t := time.NewTicker(groupSweepEvery)
	defer t.Stop()
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-t.C:
			s.sweepGroupDocs(s.ctx)
		}
	}
}
