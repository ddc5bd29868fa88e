package kafka

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"topicgate/kafka/kproducer"
	"topicgate/topicstore"
)

// Idempotent producers. A Kafka producer (id, epoch, a sequence per
// partition) is not a topicgate producer (bound to one partition, one
// seqno per topic), so the door maps each (Kafka producer id, partition)
// to the topicgate producer "kafka/<id>/<partition>" and each record's
// (epoch, sequence) to seqno epoch·2³² + sequence: a new epoch starts
// above every seqno of the last, and the store's dedup keeps what it
// keeps for SQL producers, durably and on every gateway.

// ProducerIDTopic is the topic whose offsets are the Kafka producer ids
// the door hands out: InitProducerId appends an empty message to it and
// the offset it got, with the topic's id above it, is the new producer
// id. Offsets are never reused and the topic's id changes if it is ever
// dropped and created again, so no two producers get one id. Its
// messages are kept an hour.
const ProducerIDTopic = "__kafka_producer_ids"

// initProducerID answers InitProducerId for an idempotent producer: a
// new producer id with epoch 0, or for a producer that names its id and
// epoch (KIP-360, v3+) the same id with the next epoch. A transactional
// id is initTransactional's.
func (c *conn) initProducerID(ctx context.Context, req *kmsg.InitProducerIDRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.InitProducerIDResponse)
	resp.ProducerID, resp.ProducerEpoch = -1, -1
	if req.TransactionalID != nil {
		return c.initTransactional(ctx, req, resp)
	}
	if req.ProducerID >= 0 && req.ProducerEpoch >= 0 && req.ProducerEpoch < 1<<15-1 {
		resp.ProducerID, resp.ProducerEpoch = req.ProducerID, req.ProducerEpoch+1
		return resp
	}
	id, err := c.newProducerID(ctx)
	if err != nil {
		c.s.log.Warn("kafka: no producer id", "err", err)
		resp.ErrorCode = codeOf(err)
		return resp
	}
	resp.ProducerID, resp.ProducerEpoch = id, 0
	return resp
}

// producerIDTopic returns ProducerIDTopic, creating it the first time.
func (c *conn) producerIDTopic(ctx context.Context) (topicstore.TopicInfo, error) {
	st := c.s.cfg.Store
	info, err := st.Topic(ProducerIDTopic)
	if errors.Is(err, topicstore.ErrTopicNotFound) {
		err = st.CreateTopic(ctx, topicstore.TopicConfig{Name: ProducerIDTopic, MinActivePartitions: 1, RetentionPeriod: time.Hour})
		if err == nil || errors.Is(err, topicstore.ErrTopicExists) {
			info, err = st.Topic(ProducerIDTopic)
		}
	}
	return info, err
}

// newProducerID takes the next producer id from ProducerIDTopic.
func (c *conn) newProducerID(ctx context.Context) (int64, error) {
	st := c.s.cfg.Store
	info, err := c.producerIDTopic(ctx)
	if err != nil {
		return 0, err
	}
	res, err := st.Commit(ctx, &topicstore.CommitRequest{Writes: []topicstore.TopicWrite{
		{Topic: ProducerIDTopic, Messages: []topicstore.Message{{Partition: 0, Body: []byte{}}}}}})
	if err != nil {
		return 0, err
	}
	if len(res.Placed) != 1 || res.Placed[0].First >= 1<<32 {
		return 0, fmt.Errorf("the store did not say where the producer id message went")
	}
	return int64(info.ID)<<32 | res.Placed[0].First, nil
}

// errDuplicate: every record of an idempotent batch is already stored;
// the batch is answered DUPLICATE_SEQUENCE_NUMBER, which clients take as
// success.
var errDuplicate = refuse(kerr.DuplicateSequenceNumber, "the batch's records are already stored")

// idempotent readies the messages of an idempotent producer's batch for
// the store (producer and seqnos) after Kafka's checks against the
// producer's last stored seqno: the batch must follow it (the next
// sequence of the same epoch, or sequence 0 of a later epoch), be all
// duplicates (errDuplicate: nothing is written), or it is
// OUT_OF_ORDER_SEQUENCE_NUMBER (a gap, or a batch that overlaps the
// last) or INVALID_PRODUCER_EPOCH (an older epoch: fenced). A producer
// the store does not know (new, or expired) takes any batch. A refusal
// reads again after the store's read barrier before it is final, so a
// gateway behind the cluster does not refuse what another one stored.
func (c *conn) idempotent(ctx context.Context, topic string, part int32, bp batchProducer, msgs []topicstore.Message) error {
	name := kproducer.Name(bp.id, part)
	err := checkSequence(c.s.cfg.Store, topic, name, bp, len(msgs))
	if err != nil && err != errDuplicate {
		if _, ok := c.s.cfg.Store.(topicstore.ReadBarrier); ok {
			c.barrier(ctx)
			err = checkSequence(c.s.cfg.Store, topic, name, bp, len(msgs))
		}
	}
	if err != nil {
		return err
	}
	for i := range msgs {
		msgs[i].ProducerID = name
		msgs[i].SeqNo, msgs[i].HasSeqNo = kproducer.SeqNo(bp.epoch, bp.firstSeq+int32(i)), true
	}
	return nil
}

// checkSequence is idempotent's check of a batch of n records against
// the producer's state in the store.
func checkSequence(st topicstore.Store, topic, name string, bp batchProducer, n int) error {
	if int64(bp.firstSeq)+int64(n)-1 > math.MaxInt32 {
		// Kafka's sequences wrap to 0; a seqno cannot go back, so the
		// producer must take a new epoch (a client does on this error).
		return refuse(kerr.OutOfOrderSequenceNumber, "producer %d epoch %d: the sequence wraps past %d; take a new epoch", bp.id, bp.epoch, math.MaxInt32)
	}
	info, ok := st.Producer(topic, name)
	if !ok {
		return nil
	}
	epoch, last := kproducer.Split(info.MaxSeqNo)
	switch {
	case bp.epoch == epoch && bp.firstSeq == 0 && last == math.MaxInt32:
		return refuse(kerr.OutOfOrderSequenceNumber, "producer %d epoch %d: the sequence wrapped; take a new epoch", bp.id, bp.epoch)
	case bp.epoch < epoch:
		return refuse(kerr.InvalidProducerEpoch, "producer %d epoch %d is fenced by epoch %d", bp.id, bp.epoch, epoch)
	case bp.epoch > epoch && bp.firstSeq == 0, bp.epoch == epoch && int64(bp.firstSeq) == int64(last)+1:
		return nil
	case bp.epoch == epoch && int64(bp.firstSeq)+int64(n)-1 <= int64(last):
		return errDuplicate
	}
	return refuse(kerr.OutOfOrderSequenceNumber, "producer %d epoch %d: a batch from sequence %d, the last stored is %d of epoch %d",
		bp.id, bp.epoch, bp.firstSeq, last, epoch)
}
