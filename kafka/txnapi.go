package kafka

import (
	"context"
	"errors"
	"math"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"topicgate/kafka/kproducer"
	"topicgate/topicstore"
	"topicgate/txn"
)

// The transaction APIs a producer sends between InitProducerId and
// EndTxn (transactions.go): AddPartitionsToTxn and AddOffsetsToTxn open
// the transaction and name what it touches, Produce stages into it
// (stageTxn), TxnOffsetCommit stages its group's positions.

// addPartitionsToTxn answers AddPartitionsToTxn (v0–v3: one producer's
// transaction). Each partition must exist and the connection may write
// its topic; the transaction opens with the first.
func (c *conn) addPartitionsToTxn(ctx context.Context, req *kmsg.AddPartitionsToTxnRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.AddPartitionsToTxnResponse)
	ts, err := c.txnState(req.TransactionalID, req.ProducerID, req.ProducerEpoch)
	if ts != nil {
		defer ts.mu.Unlock()
	}
	c.barrier(ctx)
	for _, rt := range req.Topics {
		t := kmsg.NewAddPartitionsToTxnResponseTopic()
		t.Topic = rt.Topic
		terr := err
		var info topicstore.TopicInfo
		if terr == nil {
			info, terr = c.servedTopic(ctx, rt.Topic, true)
		}
		for _, part := range rt.Partitions {
			p := kmsg.NewAddPartitionsToTxnResponseTopicPartition()
			p.Partition = part
			perr := terr
			if perr == nil && partitionOf(&info, part) == nil {
				perr = topicstore.ErrPartitionNotFound
			}
			if perr == nil {
				ts.begin(c.s)
				ts.parts[txnPart{rt.Topic, part}] = true
			}
			p.ErrorCode = fencedFor(codeOf(perr), req.Version, 2)
			t.Partitions = append(t.Partitions, p)
		}
		resp.Topics = append(resp.Topics, t)
	}
	return resp
}

// addOffsetsToTxn answers AddOffsetsToTxn: the group's offsets may be
// committed in the transaction (TxnOffsetCommit).
func (c *conn) addOffsetsToTxn(req *kmsg.AddOffsetsToTxnRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.AddOffsetsToTxnResponse)
	ts, err := c.txnState(req.TransactionalID, req.ProducerID, req.ProducerEpoch)
	if err != nil {
		resp.ErrorCode = fencedFor(codeOf(err), req.Version, 2)
		return resp
	}
	defer ts.mu.Unlock()
	ts.begin(c.s)
	ts.groups[req.Group] = true
	return resp
}

// txnOffsetCommit answers TxnOffsetCommit: the group's positions are
// staged in the transaction and move at its commit, atomically with what
// it produced. The group must have been added (AddOffsetsToTxn); a member
// id and generation, when given (KIP-447), are checked as OffsetCommit
// checks them; each topic's consumer is created as OffsetCommit creates
// it, with its privileges.
func (c *conn) txnOffsetCommit(ctx context.Context, req *kmsg.TxnOffsetCommitRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.TxnOffsetCommitResponse)
	ts, err := c.txnState(req.TransactionalID, req.ProducerID, req.ProducerEpoch)
	if ts != nil {
		defer ts.mu.Unlock()
		if ts.open == nil || !ts.groups[req.Group] {
			err = refuse(kerr.InvalidTxnState, "group %q was not added to the transaction (AddOffsetsToTxn)", req.Group)
		}
	}
	if err == nil && req.Version >= 3 && req.MemberID != "" {
		err = codeErr(c.s.route.call(ctx, &groupCall{Op: "commitCheck", Group: req.Group, Member: req.MemberID, Gen: req.Generation}).Code)
	}
	c.barrier(ctx)
	for _, rt := range req.Topics {
		t := kmsg.NewTxnOffsetCommitResponseTopic()
		t.Topic = rt.Topic
		terr := err
		var info topicstore.TopicInfo
		if terr == nil {
			if info, terr = c.groupTopic(ctx, rt.Topic, req.Group, true); terr == nil {
				c.s.touchGroup(ctx, &info, req.Group, time.Now())
			}
		}
		for _, rp := range rt.Partitions {
			p := kmsg.NewTxnOffsetCommitResponseTopicPartition()
			p.Partition = rp.Partition
			perr := terr
			if perr == nil {
				perr = commitable(&info, rp.Partition, rp.Offset)
			}
			if perr == nil {
				ts.open.Block().SetPosition(txn.ReadKey{Topic: rt.Topic, Consumer: req.Group, Partition: rp.Partition}, rp.Offset)
			}
			p.ErrorCode = fencedFor(codeOf(perr), req.Version, 3)
			t.Partitions = append(t.Partitions, p)
		}
		resp.Topics = append(resp.Topics, t)
	}
	return resp
}

// stageTxn stages a transactional batch of one partition in its
// producer's open transaction, after Kafka's checks: the transaction is
// open here with the partition added, and the batch's sequence follows
// the last one staged for the partition (a retry of it is a duplicate,
// answered as one; the first batch of a partition in a transaction may
// start anywhere above what the store holds, since aborted batches used
// sequences the store never saw). The records get the producer's
// topicgate producer and seqnos, as an idempotent batch's, so the store's
// dedup still decides at commit.
func (c *conn) stageTxn(id *string, topic string, part int32, bp batchProducer, msgs []topicstore.Message) error {
	if id == nil {
		return refuse(kerr.InvalidRecord, "a transactional record batch in a Produce without a transactional id")
	}
	ts, err := c.txnState(*id, bp.id, bp.epoch)
	if errors.Is(err, kerr.ProducerFenced) {
		// A partition leader answers an old epoch so, in Kafka.
		return refuse(kerr.InvalidProducerEpoch, "%v", err)
	}
	if err != nil {
		return err
	}
	defer ts.mu.Unlock()
	k := txnPart{topic, part}
	if ts.open == nil || !ts.parts[k] {
		return refuse(kerr.InvalidTxnState, "partition %d of topic %q was not added to the transaction (AddPartitionsToTxn)", part, topic)
	}
	if int64(bp.firstSeq)+int64(len(msgs))-1 > math.MaxInt32 {
		return refuse(kerr.OutOfOrderSequenceNumber, "producer %d epoch %d: the sequence wraps past %d", bp.id, bp.epoch, math.MaxInt32)
	}
	last, ok := ts.seqs[k]
	if !ok {
		last = -1
		if info, known := c.s.cfg.Store.Producer(topic, kproducer.Name(bp.id, part)); known {
			if epoch, seq := kproducer.Split(info.MaxSeqNo); epoch == bp.epoch {
				last = seq
			}
		}
	}
	switch {
	case bp.firstSeq+int32(len(msgs))-1 <= last:
		return errDuplicate
	case ok && bp.firstSeq != last+1:
		return refuse(kerr.OutOfOrderSequenceNumber, "producer %d epoch %d: a batch from sequence %d, the last staged is %d",
			bp.id, bp.epoch, bp.firstSeq, last)
	case !ok && bp.firstSeq <= last:
		return refuse(kerr.OutOfOrderSequenceNumber, "producer %d epoch %d: a batch from sequence %d, the last stored is %d",
			bp.id, bp.epoch, bp.firstSeq, last)
	}
	// The records alias the request's frame, which the connection reads
	// the next request into: the transaction keeps copies.
	name := kproducer.Name(bp.id, part)
	staged := make([]topicstore.Message, len(msgs))
	for i := range msgs {
		staged[i] = msgs[i].Clone()
		staged[i].ProducerID = name
		staged[i].SeqNo, staged[i].HasSeqNo = kproducer.SeqNo(bp.epoch, bp.firstSeq+int32(i)), true
	}
	if err := ts.open.Block().Stage(topic, staged); err != nil {
		return refuse(kerr.MessageTooLarge, "%v", err)
	}
	ts.seqs[k] = bp.firstSeq + int32(len(msgs)) - 1
	return nil
}
