package keys

import (
	"encoding/binary"
	"fmt"

	"topicgate/topicstore"
)

// The prefixes of the key layout (see doc.go).
const (
	PrefixCatalog   = "c/" // c/<topic name> -> catalog record (JSON)
	PrefixMessages  = "m/" // m/<topicID u64><partition u32><baseOffset u64> -> record batch
	PrefixProducer  = "p/" // p/<topicID u64><producer id> -> producer record
	PrefixPositions = "o/" // o/<topicID u64><partition u32><consumer> -> uvarint committed offset
	PrefixStaged    = "t/" // t/<stageID u64><seq u64> -> staged batch payload
	PrefixRefs      = "r/" // r/<stageID u64> -> partitions still referencing the staged data
	PrefixShared    = "k/" // k/<topicID u64><consumer>\x00<partition u32>[<offset u64>] -> shared consumer records
	PrefixRoles     = "u/" // u/roles -> the role catalog: <version u64><document>
	PrefixDocuments = "d/" // d/<key> -> a document (topicstore.Documents): <version u64><document>
	NextTopicID     = "x/next_topic_id"
	// NextDocVersion holds the next version a document change is given
	// (u64): store-wide, so that no version is ever given twice.
	NextDocVersion = "x/next_document_version"
)

// Catalog is the key of topic name's catalog record.
func Catalog(name string) []byte { return append([]byte(PrefixCatalog), name...) }

// Topic is prefix followed by id: the start of a topic's (or a staging
// ID's) range under prefix; Topic(prefix, id+1) is its end.
func Topic(prefix string, id uint64) []byte {
	return binary.BigEndian.AppendUint64([]byte(prefix), id)
}

// Partition is the prefix of partition part's record batches.
func Partition(id uint64, part int32) []byte {
	return binary.BigEndian.AppendUint32(Topic(PrefixMessages, id), uint32(part))
}

// Batch is the key of the record batch (or reference record) of partition
// part whose first offset is base.
func Batch(id uint64, part int32, base int64) []byte {
	return binary.BigEndian.AppendUint64(Partition(id, part), uint64(base))
}

// Producer is the key of a producer's record.
func Producer(id uint64, producer string) []byte {
	return append(Topic(PrefixProducer, id), producer...)
}

// Position is the key of consumer's committed offset in partition part:
// o/<topicID u64><partition u32><consumer name>.
func Position(id uint64, part int32, consumer string) []byte {
	k := binary.BigEndian.AppendUint32(Topic(PrefixPositions, id), uint32(part))
	return append(k, consumer...)
}

// EncodePosition is the value of a position record: uvarint offset.
func EncodePosition(off int64) []byte { return binary.AppendUvarint(nil, uint64(off)) }

// ParsePosition splits a position record.
func ParsePosition(k, v []byte) (id uint64, part int32, consumer string, off int64, err error) {
	k = k[len(PrefixPositions):]
	o, n := binary.Uvarint(v)
	if len(k) < 12 || n <= 0 {
		return 0, 0, "", 0, fmt.Errorf("%w: position record", topicstore.ErrCorrupt)
	}
	return binary.BigEndian.Uint64(k), int32(binary.BigEndian.Uint32(k[8:])), string(k[12:]), int64(o), nil
}

// Refs is the key of staging ID sid's reference record.
func Refs(sid uint64) []byte { return Topic(PrefixRefs, sid) }

// Staged is the key of chunk seq of staging ID sid's staged data.
func Staged(sid, seq uint64) []byte {
	return binary.BigEndian.AppendUint64(Topic(PrefixStaged, sid), seq)
}

// SharedPrefix is the prefix of a shared consumer's records.
func SharedPrefix(id uint64, consumer string) []byte {
	k := append(Topic(PrefixShared, id), consumer...)
	return append(k, 0)
}

// SharedStart is the key of a shared consumer's start offset in partition
// part.
func SharedStart(id uint64, consumer string, part int32) []byte {
	return binary.BigEndian.AppendUint32(SharedPrefix(id, consumer), uint32(part))
}

// SharedDone is the key of a shared consumer's record of message off of
// partition part (finished, or its delivery count).
func SharedDone(id uint64, consumer string, part int32, off int64) []byte {
	return binary.BigEndian.AppendUint64(SharedStart(id, consumer, part), uint64(off))
}

// Roles is the key of the role catalog (topicstore.RoleStore): one record,
// rewritten whole by every change.
func Roles() []byte { return []byte(PrefixRoles + "roles") }

// EncodeRoles is the value of the role catalog's record: its version,
// then the document.
func EncodeRoles(version uint64, doc []byte) []byte {
	return append(binary.BigEndian.AppendUint64(make([]byte, 0, 8+len(doc)), version), doc...)
}

// ParseRoles splits the role catalog's record; the document it returns is
// a copy (v may be Pebble's buffer).
func ParseRoles(v []byte) (version uint64, doc []byte, err error) {
	if len(v) < 8 || binary.BigEndian.Uint64(v) == 0 {
		return 0, nil, fmt.Errorf("%w: role catalog record", topicstore.ErrCorrupt)
	}
	return binary.BigEndian.Uint64(v), append([]byte{}, v[8:]...), nil
}

// Document is the key of document key (topicstore.Documents).
func Document(key string) []byte { return append([]byte(PrefixDocuments), key...) }

// EncodeDocument is a document's record: its version, then the document.
func EncodeDocument(version uint64, doc []byte) []byte { return EncodeRoles(version, doc) }

// ParseDocument splits a document's record; the document it returns is a
// copy (v may be Pebble's buffer).
func ParseDocument(v []byte) (version uint64, doc []byte, err error) {
	if len(v) < 8 || binary.BigEndian.Uint64(v) == 0 {
		return 0, nil, fmt.Errorf("%w: document record", topicstore.ErrCorrupt)
	}
	return binary.BigEndian.Uint64(v), append([]byte{}, v[8:]...), nil
}

// HasPrefix reports whether key k starts with p.
func HasPrefix(k []byte, p string) bool { return len(k) >= len(p) && string(k[:len(p)]) == p }
