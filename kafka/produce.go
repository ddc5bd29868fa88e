package kafka

import (
	"context"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"topicgate/topicstore"
)

// pendingWrite is a partition of a Produce whose batch decoded and waits
// for the request's commit: where its answer is, and which write of the
// commit it is.
type pendingWrite struct {
	topic, part int // indexes into the response
	write       int // index into CommitRequest.Writes
	logStart    int64
	idempotent  bool // an idempotent producer's batch
}

// produce answers Produce: each partition's record batch is decoded
// (decodeBatch), the batches that decoded are committed together in one
// synced store commit, and each partition is answered with the offset
// its first record got, or its own error. A partition that fails writes
// nothing; the others are not held back by it. A transactional batch is
// staged in its producer's transaction (stageTxn) and answered with
// offset -1: its offsets are known at the commit. acks=0 gets no answer.
func (c *conn) produce(ctx context.Context, req *kmsg.ProduceRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.ProduceResponse)
	commit := &topicstore.CommitRequest{}
	var pending []pendingWrite
	for ti, rt := range req.Topics {
		t := kmsg.NewProduceResponseTopic()
		t.Topic = rt.Topic
		info, terr := c.servedTopic(ctx, rt.Topic, true)
		codec := storeCodec(info.Config.SupportedCodecs)
		for _, rp := range rt.Partitions {
			p := kmsg.NewProduceResponseTopicPartition()
			p.Partition, p.BaseOffset, p.LogAppendTime, p.LogStartOffset = rp.Partition, -1, -1, -1
			err := terr
			var pi *topicstore.PartitionInfo
			if err == nil {
				if pi = partitionOf(&info, rp.Partition); pi == nil {
					err = topicstore.ErrPartitionNotFound
				}
			}
			var msgs []topicstore.Message
			var bp batchProducer
			if err == nil {
				msgs, bp, err = decodeBatch(rp.Records, rp.Partition)
			}
			for i := range msgs {
				msgs[i].Codec = codec
			}
			if err == nil && bp.transactional {
				// Staged in the producer's transaction, published at its
				// commit: no offset yet (-1), LogStartOffset as usual.
				if err = c.stageTxn(req.TransactionID, rt.Topic, rp.Partition, bp, msgs); err == nil {
					p.LogStartOffset = pi.StartOffset
				}
				p.ErrorCode, p.ErrorMessage = codeOf(err), messageOf(err)
				t.Partitions = append(t.Partitions, p)
				continue
			}
			if err == nil && bp.id >= 0 {
				err = c.idempotent(ctx, rt.Topic, rp.Partition, bp, msgs)
			}
			if err != nil {
				p.ErrorCode, p.ErrorMessage = codeOf(err), messageOf(err)
				t.Partitions = append(t.Partitions, p)
				continue
			}
			pending = append(pending, pendingWrite{topic: ti, part: len(t.Partitions), write: len(commit.Writes),
				logStart: pi.StartOffset, idempotent: bp.id >= 0})
			commit.Writes = append(commit.Writes, topicstore.TopicWrite{Topic: rt.Topic, Messages: msgs})
			t.Partitions = append(t.Partitions, p)
		}
		resp.Topics = append(resp.Topics, t)
	}
	if len(commit.Writes) > 0 {
		c.commit(ctx, req, commit, resp, pending)
	}
	if req.Acks == 0 {
		return nil
	}
	return resp
}

// commit commits a Produce's decoded batches and fills in their answers:
// the base offset each got (CommitResult.Placed), or the commit's error.
func (c *conn) commit(ctx context.Context, req *kmsg.ProduceRequest, commit *topicstore.CommitRequest, resp *kmsg.ProduceResponse, pending []pendingWrite) {
	if req.TimeoutMillis > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(req.TimeoutMillis)*time.Millisecond)
		defer cancel()
	}
	res, err := c.s.cfg.Store.Commit(ctx, commit)
	for _, pw := range pending {
		p := &resp.Topics[pw.topic].Partitions[pw.part]
		if err != nil {
			p.ErrorCode, p.ErrorMessage = codeOf(err), messageOf(err)
			continue
		}
		p.LogStartOffset = pw.logStart
		if pw.idempotent && res.Writes[pw.write].Written == 0 {
			// The store found them all stored already (a retry that
			// raced its first try): a duplicate, which clients take as
			// success.
			p.ErrorCode, p.ErrorMessage = codeOf(errDuplicate), messageOf(errDuplicate)
			continue
		}
		for _, pl := range res.Placed {
			if pl.Write == pw.write {
				p.BaseOffset = pl.First
				break
			}
		}
	}
	if err == nil && res.Throttle > 0 {
		// The partitions' write-speed limits: the answer waits, as an
		// INSERT's does (the commit is already durable).
		t := time.NewTimer(res.Throttle)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
		}
	}
}

// partitionOf is info's partition id, nil when it has none.
func partitionOf(info *topicstore.TopicInfo, id int32) *topicstore.PartitionInfo {
	for i := range info.Partitions {
		if info.Partitions[i].ID == id {
			return &info.Partitions[i]
		}
	}
	return nil
}

// storeCodec is the codec the door stores Kafka records with: raw when
// the topic accepts it (the batch was decompressed at the door; a Fetch
// sends it uncompressed), else the first of zstd and gzip it accepts.
func storeCodec(supported []topicstore.Codec) topicstore.Codec {
	for _, c := range []topicstore.Codec{topicstore.CodecRaw, topicstore.CodecZstd, topicstore.CodecGzip} {
		if supported == nil || slices.Contains(supported, c) {
			return c
		}
	}
	return supported[0]
}
