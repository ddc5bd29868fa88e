package pebblestore

import "encoding/binary"

// Key layout (see doc.go). Integers are big-endian so that keys sort
// numerically and a partition's batches form one contiguous range.
const (
	prefixCatalog   = "c/" // c/<topic name> -> catalogRecord (JSON)
	prefixMessages  = "m/" // m/<topicID u64><partition u32><baseOffset u64> -> record batch
	prefixProducer  = "p/" // p/<topicID u64><producer id> -> producer record
	prefixPositions = "o/" // o/<topicID u64><partition u32><consumer> -> uvarint committed offset
	prefixStaged    = "t/" // t/<stageID u64><seq u64> -> staged batch payload (see stage.go)
	prefixRefs      = "r/" // r/<stageID u64> -> partitions still referencing the staged data
	keyNextTopicID  = "x/next_topic_id"
)

func catalogKey(name string) []byte { return append([]byte(prefixCatalog), name...) }

func topicPrefix(prefix string, id uint64) []byte {
	return binary.BigEndian.AppendUint64([]byte(prefix), id)
}

func partitionPrefix(id uint64, part int32) []byte {
	return binary.BigEndian.AppendUint32(topicPrefix(prefixMessages, id), uint32(part))
}

func batchKey(id uint64, part int32, base int64) []byte {
	return binary.BigEndian.AppendUint64(partitionPrefix(id, part), uint64(base))
}

func producerKey(id uint64, producer string) []byte {
	return append(topicPrefix(prefixProducer, id), producer...)
}
