package executor

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"topicgate/pgcatalog"
	"topicgate/planner/catalog"
	"topicgate/sql/pgerror"
	"topicgate/topicstore"
)

func codecNames(cs []topicstore.Codec) string {
	if len(cs) == 0 {
		cs = topicstore.AllCodecs
	}
	names := make([]string, len(cs))
	for i, c := range cs {
		names[i] = c.String()
	}
	return strings.Join(names, ",")
}

func nullTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t
}

// sysRows materializes a system view from the store's current state.
func (s *Session) sysRows(view string) ([][]any, error) {
	if t, ok := strings.CutPrefix(view, "pg_catalog."); ok {
		return pgcatalog.Rows(t, s.catalogSource()), nil
	}
	topics := s.eng.store.Topics()
	sort.Slice(topics, func(i, j int) bool { return topics[i].Config.Name < topics[j].Config.Name })
	var rows [][]any
	switch view {
	case "topics":
		for _, t := range topics {
			c := t.Config
			var msgs, bytes, active int64
			for _, p := range t.Partitions {
				msgs += p.Messages
				bytes += p.Bytes
				if p.Active {
					active++
				}
			}
			consumers := make([]string, len(c.Consumers))
			for i, cc := range c.Consumers {
				consumers[i] = cc.Name
			}
			ret := c.RetentionPeriod
			if ret == 0 {
				ret = topicstore.DefaultRetention
			}
			speed := c.PartitionWriteSpeedBytes
			if speed == 0 {
				speed = topicstore.DefaultWriteSpeedBytesPerSec
			}
			strategy := c.AutoPartitioningStrategy
			if strategy == "" {
				strategy = "disabled"
			}
			up, down, window := int64(c.AutoPartitioningUpPercent), int64(c.AutoPartitioningDownPercent), c.AutoPartitioningWindow
			if up == 0 {
				up = topicstore.DefaultUpUtilizationPercent
			}
			if down == 0 {
				down = topicstore.DefaultDownUtilizationPercent
			}
			if window == 0 {
				window = topicstore.DefaultStabilizationWindow
			}
			var metering any
			if c.MeteringMode != "" {
				metering = c.MeteringMode
			}
			rows = append(rows, []any{c.Name, int64(len(t.Partitions)), active, int64(c.MinActivePartitions),
				int64(c.MaxActivePartitions), ret, c.RetentionStorageMB, codecNames(c.SupportedCodecs), speed,
				strategy, strings.Join(consumers, ","), msgs, bytes, nullTime(t.CreatedAt),
				c.PartitionWriteBurstBytes, metering, up, down, window, topicstore.ProducerExpiry(&c, topicstore.DefaultProducerExpiry)})
		}
	case "partitions":
		for _, t := range topics {
			rates, _ := s.eng.store.WriteRates(t.Config.Name)
			for _, p := range t.Partitions {
				rows = append(rows, partitionRow(t, p, rates))
			}
		}
	case "consumers":
		rows = s.consumerRows(topics)
	case "consumer_options":
		rows = consumerOptionRows(topics)
	case "sessions":
		rows = s.sessionRows()
	case "transactions":
		rows = s.transactionRows()
	case "cluster":
		rows = s.clusterRows()
	case "producers":
		for _, t := range topics {
			ps, err := s.eng.store.Producers(t.Config.Name)
			if err != nil {
				continue
			}
			sort.Slice(ps, func(i, j int) bool { return ps[i].ProducerID < ps[j].ProducerID })
			for _, p := range ps {
				rows = append(rows, []any{t.Config.Name, p.ProducerID, int64(p.Partition), p.MaxSeqNo, nullTime(p.LastWrite)})
			}
		}
	default:
		return nil, pgerror.AssertionFailed("unknown system view %s", view)
	}
	if v, ok := catalog.SysViews[view]; ok {
		for _, r := range rows {
			if len(r) != len(v.Names) {
				return nil, pgerror.AssertionFailed("sys.%s row has %d values, want %d", view, len(r), len(v.Names))
			}
		}
	}
	return rows, nil
}

// partitionRow is one sys.partitions row: the partition's place in the
// layout (state, parent, children, its key range as 16 hex digits in a
// keyed topic) and its write rate over the stabilization window, also as
// a percentage of partition_write_speed_bytes_per_second (what
// auto-partitioning splits on).
func partitionRow(t topicstore.TopicInfo, p topicstore.PartitionInfo, rates []float64) []any {
	state := "active"
	switch {
	case p.Deleted:
		state = "deleted"
	case !p.Active:
		state = "inactive"
	}
	var parent, from, to any
	if p.Parent >= 0 {
		parent = int64(p.Parent)
	}
	if p.Keyed {
		from, to = fmt.Sprintf("%016x", p.KeyLo), fmt.Sprintf("%016x", p.KeyHi)
	}
	children := make([]int64, len(p.Children))
	for i, c := range p.Children {
		children[i] = int64(c)
	}
	var rate float64
	if int(p.ID) < len(rates) {
		rate = rates[p.ID]
	}
	speed := t.Config.PartitionWriteSpeedBytes
	if speed <= 0 {
		speed = topicstore.DefaultWriteSpeedBytesPerSec
	}
	return []any{t.Config.Name, int64(p.ID), p.Active, p.StartOffset, p.EndOffset, p.Messages, p.Bytes,
		nullTime(p.LastWrite), state, parent, children, from, to, rate, 100 * rate / float64(speed), p.Throttled.Seconds()}
}

// catalogSource is the session as the pg_catalog tables show it.
func (s *Session) catalogSource() pgcatalog.Source {
	return pgcatalog.Source{Database: s.info.Database, User: s.info.User,
		Topics:   s.eng.store.Topics,
		Settings: s.settings.catalogRows,
		Cursors: func() []pgcatalog.Cursor {
			var out []pgcatalog.Cursor
			for _, c := range s.cursors {
				out = append(out, pgcatalog.Cursor{Name: c.name, Statement: c.statement, Holdable: c.hold, Created: c.created})
			}
			return out
		}}
}
