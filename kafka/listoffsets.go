package kafka

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"topicgate/topicstore"
)

// ListOffsets' special timestamps.
const (
	latestTimestamp   = -1
	earliestTimestamp = -2
)

// listOffsets answers ListOffsets: -2 (earliest) is the partition's first
// retained offset, -1 (latest) its end (the high watermark, which is also
// the last stable offset: a transaction's writes appear at commit), and a
// timestamp the first offset of a batch written at or after it
// (topicstore.Store.OffsetForTime: the time a message was written, which
// for a Kafka record is at or after its CreateTime), answered with that
// message's timestamp, or offset -1 when none was written since.
func (c *conn) listOffsets(ctx context.Context, req *kmsg.ListOffsetsRequest) kmsg.Response {
	c.barrier(ctx)
	resp := req.ResponseKind().(*kmsg.ListOffsetsResponse)
	for _, rt := range req.Topics {
		t := kmsg.NewListOffsetsResponseTopic()
		t.Topic = rt.Topic
		info, terr := c.servedTopic(ctx, rt.Topic, false)
		var byTime map[int32]int64
		for _, rp := range rt.Partitions {
			p := kmsg.NewListOffsetsResponseTopicPartition()
			p.Partition, p.Timestamp, p.Offset, p.LeaderEpoch = rp.Partition, -1, -1, 0
			err := terr
			var pi *topicstore.PartitionInfo
			if err == nil {
				if pi = partitionOf(&info, rp.Partition); pi == nil {
					err = topicstore.ErrPartitionNotFound
				}
			}
			if err == nil {
				switch rp.Timestamp {
				case earliestTimestamp:
					p.Offset = pi.StartOffset
				case latestTimestamp:
					p.Offset = pi.EndOffset
				default:
					if byTime == nil {
						byTime, err = c.s.cfg.Store.OffsetForTime(rt.Topic, time.UnixMilli(rp.Timestamp))
					}
					if err == nil {
						err = c.offsetAt(ctx, rt.Topic, pi, byTime[rp.Partition], &p)
					}
				}
			}
			p.ErrorCode = codeOf(err)
			t.Partitions = append(t.Partitions, p)
		}
		resp.Topics = append(resp.Topics, t)
	}
	return resp
}

// offsetAt answers a lookup by timestamp that found off: the offset and
// its message's timestamp, or -1 and -1 when off is the partition's end
// (nothing was written since).
func (c *conn) offsetAt(ctx context.Context, topic string, pi *topicstore.PartitionInfo, off int64, p *kmsg.ListOffsetsResponseTopicPartition) error {
	if off >= pi.EndOffset {
		return nil
	}
	off = max(off, pi.StartOffset)
	p.Offset = off
	return c.s.cfg.Store.Scan(ctx, topic, topicstore.ScanRange{Partition: pi.ID, Start: off, End: off + 1}, func(m *topicstore.Message) bool {
		p.Timestamp = m.CreatedAt.UnixMilli()
		return false
	})
}
