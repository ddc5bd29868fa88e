package catalog

import (
	"context"
	"fmt"

	"topicgate/topicstore"
	"topicgate/topicstore/decide"
	"topicgate/topicstore/jetstream/fold"
	"topicgate/topicstore/jetstream/plan"
)

// SplitPartition implements topicstore.Store's SplitPartition: one
// catalog change, with the embedded store's rules. A commit planned on
// the old layout carries a guard on the catalog subject, so it is refused
// and planned again on the new one: nothing is written to the parent
// after the split.
func (c *Catalog) SplitPartition(ctx context.Context, topic string, partition int32) error {
	return c.Change(ctx, topic, func(old *fold.Topic) (*fold.CatalogRec, error) {
		if old == nil {
			return nil, fmt.Errorf("%w: %q", topicstore.ErrTopicNotFound, topic)
		}
		l := old.Rec.Layout.Clone()
		if max := old.Rec.Config.MaxActivePartitions; max > 0 && l.Active()+1 > max {
			return nil, fmt.Errorf("%w: topic %q already has %d active partitions, its max_active_partitions", topicstore.ErrAutoPartitioning, topic, l.Active())
		}
		if _, _, err := l.Split(partition); err != nil {
			return nil, fmt.Errorf("topic %q: %w", topic, err)
		}
		rec := old.Rec
		rec.Layout = l
		return &rec, nil
	})
}

// WriteRates implements topicstore.Store's WriteRates: the fold's meters,
// the same on every gateway.
func (c *Catalog) WriteRates(topic string) ([]float64, error) {
	c.h.Lock()
	defer c.h.Unlock()
	t := c.cfg.Fold.ByName[topic]
	if t == nil {
		return nil, fmt.Errorf("%w: %q", topicstore.ErrTopicNotFound, topic)
	}
	now := c.cfg.Clock()
	out := make([]float64, len(t.Parts))
	for i, ps := range t.Parts {
		if ps.Meter != nil {
			out[i] = ps.Meter.Rate(now)
		}
	}
	return out, nil
}

// AutoSplit splits the partitions a group wrote that stayed overloaded
// for their window ('scale_up'), as the embedded store does after a
// group. Gateways need no election for it: the split is a catalog change
// conditional on the catalog subject, so when two gateways decide the
// same split, the second one finds the partition split already and does
// nothing.
func (c *Catalog) AutoSplit(wrote [][]plan.PartKey) {
	type due struct {
		name string
		part int32
	}
	var splits []due
	c.h.Lock()
	now := c.cfg.Clock()
	seen := map[plan.PartKey]bool{}
	for _, ks := range wrote {
		for _, k := range ks {
			t := c.cfg.Fold.ByID[k.Topic]
			if seen[k] || t == nil || int(k.Part) >= len(t.Parts) || decide.Inactive(&t.Rec.Layout, k.Part) {
				continue
			}
			seen[k] = true
			if !topicstore.SplitDue(&t.Rec.Config, t.Parts[k.Part].Meter, now) {
				continue
			}
			if max := t.Rec.Config.MaxActivePartitions; max > 0 && t.Rec.Layout.Active()+1 > max {
				continue // at its limit: the partition stays as it is
			}
			splits = append(splits, due{t.Rec.Config.Name, k.Part})
		}
	}
	c.h.Unlock()
	for _, d := range splits {
		_ = c.Change(context.Background(), d.name, func(old *fold.Topic) (*fold.CatalogRec, error) {
			if old == nil || decide.Inactive(&old.Rec.Layout, d.part) {
				return nil, ErrNothing // dropped, or split by another gateway meanwhile
			}
			l := old.Rec.Layout.Clone()
			if _, _, err := l.Split(d.part); err != nil {
				return nil, err
			}
			rec := old.Rec
			rec.Layout = l
			return &rec, nil
		})
	}
}
