package sysview

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"topicgate/kafka/kproducer"
	"topicgate/planner/catalog"
	"topicgate/sql/pgerror"
	"topicgate/topicstore"
)

// Views makes the sys views' rows for one gateway: from its store, and
// from what only the executor knows of this process (Local).
type Views struct {
	store topicstore.Store
	clock func() time.Time
	local Local
	// gather, on a store several gateways share, asks the others for
	// their sessions (sessions.go); nil on the embedded store.
	gather topicstore.Gatherer
	// gatewayID names this gateway in those views ("" on the embedded
	// store).
	gatewayID string
	// kafka lists the Kafka door's groups (SetKafkaGroups), kafkaConns
	// its connections (SetKafkaSessions).
	kafka      kafkaGroups
	kafkaConns kafkaSessions
}

// Local is what the views show of this process besides the store: its
// sessions and its consumers' read sessions. The executor implements it.
type Local interface {
	// Sessions lists this process's sessions, in any order, each with
	// the partitions its read sessions hold.
	Sessions() []SessionView
	// Holder returns the process id of this process's read session that
	// holds partition of the streaming consumer (0 if none).
	Holder(topic, consumer string, partition int32) uint32
}

// New returns the views of a gateway over st, whose time is clock's. On
// a store several gateways share (a topicstore.Gatherer) it makes this
// gateway answer the others' questions about its sessions.
func New(st topicstore.Store, clock func() time.Time, local Local) *Views {
	v := &Views{store: st, clock: clock, local: local}
	v.serveSessions()
	return v
}

// Rows materializes sys.view from the store's current state and this
// process's; every row has the view's columns (catalog.SysViews).
func (v *Views) Rows(view string) ([][]any, error) {
	topics := v.store.Topics()
	sort.Slice(topics, func(i, j int) bool { return topics[i].Config.Name < topics[j].Config.Name })
	var rows [][]any
	switch view {
	case "topics":
		for _, t := range topics {
			rows = append(rows, topicRow(t))
		}
	case "partitions":
		for _, t := range topics {
			rates, _ := v.store.WriteRates(t.Config.Name)
			for _, p := range t.Partitions {
				rows = append(rows, partitionRow(t, p, rates))
			}
		}
	case "consumers":
		rows = v.consumerRows(topics)
	case "consumer_options":
		rows = consumerOptionRows(topics)
	case "consumer_deliveries":
		rows = v.deliveryRows(topics)
	case "sessions":
		rows = v.sessionRows()
	case "transactions":
		rows = v.transactionRows()
	case "cluster":
		rows = v.clusterRows()
	case "kafka_groups":
		rows = v.kafkaGroupRows()
	case "producers", "kafka_producers":
		for _, t := range topics {
			ps, err := v.store.Producers(t.Config.Name)
			if err != nil {
				continue
			}
			sort.Slice(ps, func(i, j int) bool { return ps[i].ProducerID < ps[j].ProducerID })
			for _, p := range ps {
				if view == "producers" {
					rows = append(rows, []any{t.Config.Name, p.ProducerID, int64(p.Partition), p.MaxSeqNo, nullTime(p.LastWrite)})
				} else if id, part, ok := kproducer.Parse(p.ProducerID); ok {
					epoch, seq := kproducer.Split(p.MaxSeqNo)
					rows = append(rows, []any{t.Config.Name, id, int64(part), int64(epoch), int64(seq), nullTime(p.LastWrite)})
				}
			}
		}
	default:
		return nil, pgerror.AssertionFailed("unknown system view %s", view)
	}
	if decl, ok := catalog.SysViews[view]; ok {
		for _, r := range rows {
			if len(r) != len(decl.Names) {
				return nil, pgerror.AssertionFailed("sys.%s row has %d values, want %d", view, len(r), len(decl.Names))
			}
		}
	}
	return rows, nil
}

// topicRow is one sys.topics row: the topic's options in effect (the
// defaults where it set none) and its partitions' totals.
func topicRow(t topicstore.TopicInfo) []any {
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
	return []any{c.Name, int64(len(t.Partitions)), active, int64(c.MinActivePartitions),
		int64(c.MaxActivePartitions), ret, c.RetentionStorageMB, codecNames(c.SupportedCodecs), speed,
		strategy, strings.Join(consumers, ","), msgs, bytes, nullTime(t.CreatedAt),
		c.PartitionWriteBurstBytes, metering, up, down, window, topicstore.ProducerExpiry(&c, topicstore.DefaultProducerExpiry)}
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

// nullText is s, or NULL when it is empty.
func nullText(s string) any {
	if s == "" {
		return nil
	}
	return s
}
