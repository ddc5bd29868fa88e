package kafka

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"topicgate/topicstore"
)

// recordOverhead is what a record costs in a batch beyond its key, value
// and headers, roughly: the byte counts of Fetch's limits.
const recordOverhead = 20

// fetch answers Fetch. It reads every partition asked for from its fetch
// offset; when that finds fewer than MinBytes and no partition has an
// error, it waits (up to MaxWaitMillis) on the store's events for the
// topics (topicstore.Store.Changed), never polling, and reads again when
// one fires. Fetch sessions (v7+) are declined: the answer's session id
// is 0, so every request is a full one.
func (c *conn) fetch(ctx context.Context, req *kmsg.FetchRequest) kmsg.Response {
	var deadline time.Time
	if req.MaxWaitMillis > 0 {
		deadline = time.Now().Add(time.Duration(req.MaxWaitMillis) * time.Millisecond)
	}
	c.barrier(ctx)
	for {
		// Ask for the events before reading, so that a commit between the
		// read and the wait still wakes it.
		changed := c.changed(req)
		resp, size, done := c.fetchOnce(ctx, req)
		if done || size >= int(req.MinBytes) || deadline.IsZero() || !time.Now().Before(deadline) {
			return resp
		}
		if c.s.cfg.OnWait != nil {
			c.s.cfg.OnWait()
		}
		if !waitAny(ctx, changed, deadline) {
			return resp
		}
	}
}

// changed returns the store's change events of the topics req reads.
func (c *conn) changed(req *kmsg.FetchRequest) []<-chan struct{} {
	var out []<-chan struct{}
	for _, rt := range req.Topics {
		if ch, err := c.s.cfg.Store.Changed(rt.Topic); err == nil {
			out = append(out, ch)
		}
	}
	return out
}

// waitAny waits until one of chans is closed (true), or deadline passes
// or ctx ends (false).
func waitAny(ctx context.Context, chans []<-chan struct{}, deadline time.Time) bool {
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	fired := make(chan struct{}, 1)
	stop := make(chan struct{})
	defer close(stop)
	for _, ch := range chans {
		go func() {
			select {
			case <-ch:
				select {
				case fired <- struct{}{}:
				default:
				}
			case <-stop:
			}
		}()
	}
	select {
	case <-fired:
		return true
	case <-timer.C:
		return false
	case <-ctx.Done():
		return false
	}
}

// fetchBudget is what a Fetch may still return, in bytes (MaxBytes, v3+).
type fetchBudget struct {
	left int
	any  bool // a record was taken: the budget binds from now on
}

// fetchOnce reads every partition of req once. It returns the answer,
// the bytes of records in it, and whether some partition has an error
// (which answers at once).
func (c *conn) fetchOnce(ctx context.Context, req *kmsg.FetchRequest) (*kmsg.FetchResponse, int, bool) {
	resp := req.ResponseKind().(*kmsg.FetchResponse)
	if req.SessionID != 0 {
		// The door never gave out a session: the client must start over.
		resp.ErrorCode = kerr.FetchSessionIDNotFound.Code
		return resp, 0, true
	}
	budget := fetchBudget{left: int(req.MaxBytes)}
	if req.Version < 3 || budget.left <= 0 {
		budget.left = int(^uint(0) >> 1)
	}
	total, failed := 0, false
	for _, rt := range req.Topics {
		t := kmsg.NewFetchResponseTopic()
		t.Topic = rt.Topic
		info, terr := c.servedTopic(ctx, rt.Topic, false)
		for _, rp := range rt.Partitions {
			p := kmsg.NewFetchResponseTopicPartition()
			p.Partition = rp.Partition
			// Empty, never null: librdkafka refuses a null record set
			// ("invalid MessageSetSize -1").
			p.RecordBatches = []byte{}
			err := terr
			if err == nil {
				err = c.fetchPartition(ctx, &info, &rp, &p, &budget)
			}
			if err != nil {
				p.ErrorCode, failed = codeOf(err), true
				p.HighWatermark, p.LastStableOffset, p.LogStartOffset = -1, -1, -1
			}
			total += len(p.RecordBatches)
			t.Partitions = append(t.Partitions, p)
		}
		resp.Topics = append(resp.Topics, t)
	}
	return resp, total, failed
}

// fetchPartition fills p from one partition of info: its watermarks and
// the records from the fetch offset, as one uncompressed record batch
// within the partition's and the request's byte limits (at least one
// record while the request has taken none, as Kafka since KIP-74).
func (c *conn) fetchPartition(ctx context.Context, info *topicstore.TopicInfo, rp *kmsg.FetchRequestTopicPartition, p *kmsg.FetchResponseTopicPartition, budget *fetchBudget) error {
	pi := partitionOf(info, rp.Partition)
	if pi == nil {
		return topicstore.ErrPartitionNotFound
	}
	p.HighWatermark, p.LastStableOffset, p.LogStartOffset = pi.EndOffset, pi.EndOffset, pi.StartOffset
	if rp.FetchOffset < pi.StartOffset || rp.FetchOffset > pi.EndOffset {
		return topicstore.ErrOffsetOutOfRange
	}
	if rp.FetchOffset == pi.EndOffset {
		return nil
	}
	partLeft := int(rp.PartitionMaxBytes)
	if partLeft <= 0 {
		partLeft = int(^uint(0) >> 1)
	}
	var w batchWriter
	var derr error
	out := p.RecordBatches
	r := topicstore.ScanRange{Partition: pi.ID, Start: rp.FetchOffset, End: pi.EndOffset}
	err := c.s.cfg.Store.Scan(ctx, info.Config.Name, r, func(m *topicstore.Message) bool {
		size := len(m.Key) + len(m.Body) + recordOverhead
		for _, h := range m.Headers {
			size += len(h.Key) + len(h.Value)
		}
		if budget.any && (size > partLeft || size > budget.left) {
			return false
		}
		var body []byte
		if body, derr = m.Decode(); derr != nil {
			return false
		}
		out = w.add(out, m, body) // m is the scan's only during the call: copied into the batch now
		partLeft -= size
		budget.left -= size
		budget.any = true
		return partLeft > 0 && budget.left > 0
	})
	if err == nil {
		err = derr
	}
	if err != nil {
		return err
	}
	p.RecordBatches = w.finish(out)
	return nil
}
