package topicstore

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// This file is the narrow interface the rest of topicgate uses, which both
// backends implement. It speaks of topics, partitions, offsets, messages
// and producers, never of SQL and never of a backend's keys or streams
// (doc.go states what every backend promises).

// Codec is a message body compression codec.
type Codec uint8

// Codecs, numbered as YDB numbers them.
const (
	CodecRaw  Codec = 1
	CodecGzip Codec = 2
	CodecLzop Codec = 3
	CodecZstd Codec = 4
)

// AllCodecs lists every codec, the default of supported_codecs.
var AllCodecs = []Codec{CodecRaw, CodecGzip, CodecLzop, CodecZstd}

// MaxMessageSize is the largest message accepted, 12 MiB: its body
// (uncompressed) plus its Kafka key and headers (Message.Size).
const MaxMessageSize = 12 << 20

// Default values, as YDB's.
const (
	DefaultRetention              = 18 * time.Hour
	DefaultWriteSpeedBytesPerSec  = 1 << 20
	DefaultUpUtilizationPercent   = 90
	DefaultDownUtilizationPercent = 30
	DefaultStabilizationWindow    = 5 * time.Minute
	DefaultProducerExpiry         = 14 * 24 * time.Hour
	DefaultProcessingTimeout      = 30 * time.Second
	MaxConsumersPerTopic          = 3000
)

// Errors the store returns. Callers map them to SQLSTATEs.
var (
	ErrTopicExists       = errors.New("topic already exists")
	ErrTopicNotFound     = errors.New("topic does not exist")
	ErrConsumerExists    = errors.New("consumer already exists")
	ErrConsumerNotFound  = errors.New("consumer does not exist")
	ErrPartitionNotFound = errors.New("partition does not exist")
	// ErrPartitionInactive: the partition split and takes no more writes.
	ErrPartitionInactive = errors.New("partition is inactive")
	// ErrAutoPartitioning: a layout change auto-partitioning forbids.
	ErrAutoPartitioning = errors.New("auto-partitioning")
	// ErrProducerPartition: a message names an explicit partition other
	// than the one its producer is bound to (ProducerPartitionError).
	ErrProducerPartition = errors.New("producer is bound to another partition")
	ErrCodecNotSupported = errors.New("codec not supported by topic")
	ErrMessageTooLarge   = errors.New("message too large")
	// ErrInvalidMessage: a message contradicts itself (a null body with
	// bytes); CheckMessage.
	ErrInvalidMessage     = errors.New("invalid message")
	ErrPartitionsDecrease = errors.New("min_active_partitions cannot decrease")
	ErrClosed             = errors.New("store closed")
	ErrCorrupt            = errors.New("corrupt data")
	// ErrUnavailable: the store's cluster did not answer (no quorum, no
	// leader, unreachable). From Commit it promises that nothing of the
	// commit was stored; elsewhere nothing of the operation is known to
	// have happened unless the store says so. Callers map it to 57P03.
	ErrUnavailable = errors.New("store unavailable")
	// ErrOutcomeUnknown: the commit reached the store's cluster, and
	// whether the cluster stored it could not be learned in time (it
	// stopped answering). It is stored whole or not at all, never in part;
	// the store settles what it staged once it learns which. A retry with
	// the same producer_id and seqnos is safe (deduplicated). Callers map
	// it to 08007 (transaction_resolution_unknown), never to an error that
	// promises nothing was stored.
	ErrOutcomeUnknown = errors.New("commit outcome unknown")
	// ErrUnsupported: the backend does not implement the operation yet
	// (0A000).
	ErrUnsupported = errors.New("not supported by this store")
	// ErrPositionConflict: a PositionUpdate's Expect did not match the
	// committed offset (someone else moved the position). Callers map it
	// to SQLSTATE 40001.
	ErrPositionConflict = errors.New("consumer position was moved concurrently")
	// ErrStagingSwept: the transaction's staged data was removed before its
	// commit, because the store took the gateway that staged it for dead
	// (it was out of touch with the cluster too long). Nothing of the
	// commit is visible; callers map it to 40001 (retry the transaction).
	ErrStagingSwept = errors.New("the transaction's staged data was swept")
	// ErrLockExpired: a commit acknowledges a shared-consumer message whose
	// lock expired or is not held by the committing session (40001).
	ErrLockExpired = errors.New("message lock expired or not held")
	// ErrOffsetOutOfRange: an explicit position outside [start, end].
	ErrOffsetOutOfRange = errors.New("offset out of range")
	// ErrNotShared: a shared-consumer operation named a streaming consumer.
	ErrNotShared = errors.New("consumer is not a shared consumer")
	// ErrFenced: a commit's ProducerFence found its producer past the
	// fence (a newer instance of the writer took over); the commit wrote
	// nothing.
	ErrFenced = errors.New("producer fenced")
)

// ConsumerConfig is a consumer's definition.
type ConsumerConfig struct {
	Name               string
	Shared             bool // type = 'shared'; else streaming
	Important          bool
	ReadFrom           time.Time // zero = from the beginning
	SupportedCodecs    []Codec   // nil = all
	AvailabilityPeriod time.Duration
	// Shared consumers only.
	ProcessingTimeout     time.Duration // default_processing_timeout
	MaxProcessingAttempts int           // 0 = unlimited
	DeadLetterPolicy      string        // "none", "delete", "move"
	DeadLetterQueue       string
	KeepMessagesOrder     bool
	ReceiveMessageDelay   time.Duration
	// ACL is who may read as the consumer, acknowledge for it and move its
	// position (USAGE; package acl gives the bits meaning). The topic's
	// owner needs no entry.
	ACL []ACLItem
	// Origin names what created the consumer when no DDL statement did
	// ("kafka": the Kafka door, for a consumer group), and UsedAt when
	// that creator last recorded a use of it (the door drops a group's
	// consumers unused for its offsets retention). The store keeps both
	// and gives them no meaning.
	Origin string    `json:",omitempty"`
	UsedAt time.Time `json:",omitempty"`
}

// TopicConfig is a topic's definition. Zero values mean "default".
type TopicConfig struct {
	Name                        string
	MinActivePartitions         int
	MaxActivePartitions         int
	RetentionPeriod             time.Duration
	RetentionStorageMB          int64
	SupportedCodecs             []Codec // nil = AllCodecs
	PartitionWriteSpeedBytes    int64   // 0 = default, not throttled
	PartitionWriteBurstBytes    int64   // 0 = one second of the speed; alone it throttles nothing
	MeteringMode                string
	AutoPartitioningStrategy    string // "disabled", "scale_up", "paused"
	AutoPartitioningUpPercent   int
	AutoPartitioningDownPercent int
	AutoPartitioningWindow      time.Duration
	// ProducerExpiry is how long a producer's binding and dedup state
	// survive without writes (producer_inactivity_period); 0 = the
	// store's default (DefaultProducerExpiry unless configured).
	ProducerExpiry time.Duration
	Consumers      []ConsumerConfig
	// Owner is the role that created the topic or was given it (ALTER
	// TOPIC OWNER TO); "" in a topic created before roles existed, which
	// the bootstrap superuser owns.
	Owner string `json:",omitempty"`
	// ACL is the topic's access list (GRANT ... ON TOPIC), ColumnACLs its
	// columns' (GRANT SELECT (col) ON TOPIC); nil: only the owner.
	ACL        []ACLItem
	ColumnACLs []ColumnACL `json:",omitempty"`
}

// PartitionInfo describes one partition's state.
type PartitionInfo struct {
	ID int32
	// Active: the partition takes writes. A split makes it inactive
	// (readable, never written again) and gives it two Children; Parent
	// is the partition it was split from (-1: none). In a keyed layout
	// (auto-partitioning) an active partition owns the key hashes
	// KeyLo..KeyHi (inclusive).
	Active bool
	// Deleted: an inactive partition that retention emptied after every
	// consumer had read it to its end; it stays listed for its children.
	Deleted      bool
	Parent       int32
	Children     []int32
	Keyed        bool
	KeyLo, KeyHi uint64
	StartOffset  int64 // first retained offset
	EndOffset    int64 // next offset to be assigned (visible end)
	Bytes        int64 // stored bytes of retained messages
	Messages     int64 // EndOffset - StartOffset
	LastWrite    time.Time
	// WrittenBytes is the stored bytes ever written to the partition (the
	// cumulative byte count at EndOffset): a counter that only grows and
	// survives restarts, as EndOffset counts the messages ever written.
	WrittenBytes int64
	// Throttled is the write-speed delay imposed on writes to the
	// partition since the process started, summed over writes.
	Throttled time.Duration
}

// TopicInfo is a topic's definition and state.
type TopicInfo struct {
	Config TopicConfig
	// ID is the topic's number in the order topics were created, from 1,
	// never reused (pg_class oids are derived from it): the same on every
	// gateway of a cluster, and the same as the embedded store's for the
	// same DDL.
	ID         uint64
	CreatedAt  time.Time
	Partitions []PartitionInfo
	// Throttled is the sum of the partitions' Throttled.
	Throttled time.Duration
}

// Attr is one user attribute.
type Attr struct{ Key, Value string }

// Header is one Kafka record header. A message's headers keep their
// order and may repeat a key; a nil Value is Kafka's null header value.
type Header struct {
	Key   string
	Value []byte
}

// Message is one message. On write, Partition < 0 means "chosen by the
// store" (producer binding or round robin), Body holds the uncompressed data
// and the store compresses it with Codec. On read, Body holds the stored
// (compressed) bytes: call Decode to get the data.
type Message struct {
	Partition      int32
	Offset         int64
	ProducerID     string // "" = write without dedup
	SeqNo          int64
	HasSeqNo       bool
	MessageGroupID string // "" = none
	CreatedAt      time.Time
	WrittenAt      time.Time
	Codec          Codec
	Attrs          []Attr
	Body           []byte
	Delay          time.Duration
	// Key is the Kafka record key; nil means none (Kafka's null key), and
	// an empty non-nil slice is an empty key.
	Key []byte
	// Headers are the Kafka record headers, in order.
	Headers []Header
	// NullBody marks Kafka's null value (a tombstone): Body is empty and
	// SQL reads data as NULL.
	NullBody bool
}

// Decode returns the message's uncompressed data (nil for a null body).
func (m *Message) Decode() ([]byte, error) {
	if m.NullBody {
		return nil, nil
	}
	return Decompress(m.Codec, m.Body)
}

// TopicWrite is a set of messages for one topic in a commit. Staged
// batches (made by Stager.StageBatch) are committed with the same
// atomicity as Messages and come before them: the staged batches in order,
// then Messages.
type TopicWrite struct {
	Topic    string
	Messages []Message
	Staged   []StagedBatch
}

// Stager stages a large transaction's messages in the store before commit.
// It is optional: a backend implements it or states that it does not
// (storetest.Config.Unclaimed); txn spills only to a store that has it.
// Staged data is invisible until a commit
// names it in TopicWrite.Staged; it then joins the partitions by reference,
// without being copied.
type Stager interface {
	// StageBatch validates msgs like Commit does (topic, explicit
	// partition, codec, size), compresses and encodes them and stores them
	// outside the partitions, unsynced (a crash before the commit loses
	// them, which is fine: the transaction never committed). Messages are
	// grouped by (explicit partition, producer id): each group keeps its
	// order and lands in one partition at commit; the relative order of
	// different groups that land in the same partition is not kept.
	// txnID must be unique among the transactions open on the store; a
	// commit names the returned batches in TopicWrite.Staged (at most once).
	StageBatch(ctx context.Context, txnID uint64, topic string, msgs []Message) (StagedBatch, error)
	// DiscardStaged deletes everything txnID staged and did not commit
	// (rollback, failed commit). Discarding after a successful commit, or
	// for an unknown transaction, does nothing.
	DiscardStaged(txnID uint64) error
}

// StagedBatch describes the messages one StageBatch call stored. It is
// small: no message data, one StagedChunk per ~32 KiB record batch.
type StagedBatch struct {
	Topic    string
	TxnID    uint64
	Messages int
	Bytes    int64 // encoded bytes
	Chunks   []StagedChunk
	// StageID is the backend's own ID of the staging, set by
	// StageBatch; callers carry it unchanged.
	StageID uint64
}

// StagedChunk is one staged record batch: all its messages share one
// explicit partition (or none) and one producer (or none), so the commit
// places the chunk in one partition and decides dedup from the summary.
type StagedChunk struct {
	Seq        uint64 // staged key sequence number
	Partition  int32  // explicit partition, or -1
	ProducerID string // "" = no producer
	Count      int
	Bytes      int64  // payload bytes
	CRC        uint32 // CRC32C of the payload
	Codecs     uint8  // bit c set: some message uses codec c
	// Producer seqno summary: SeqOK means every message has a seqno and
	// they strictly increase, so dedup is decided by SeqMin alone.
	SeqMin, SeqMax int64
	SeqOK          bool
}

// PositionUpdate moves a consumer's committed offset in one partition. The
// committed offset is the next offset the consumer will read (Kafka's
// convention).
type PositionUpdate struct {
	Topic     string
	Consumer  string
	Partition int32
	Offset    int64
	// Expect, when >= 0, is the committed offset the update was based on:
	// if the stored one differs at commit time the whole commit fails with
	// ErrPositionConflict and writes nothing.
	Expect int64
	// Forget, instead of moving the position, forgets the partition's
	// stored one (Offset is ignored): the consumer reads the partition
	// from its start again, as a consumer created without read_from, and
	// StoredPositions no longer lists it. Expect applies as to a move.
	Forget bool
}

// CommitRequest is everything one atomic, synced commit does: its writes
// and its position updates are applied together or not at all.
type CommitRequest struct {
	Writes    []TopicWrite
	Positions []PositionUpdate
	// Acks acknowledges shared-consumer messages the committing session
	// holds, atomically with the writes and positions; a lock that expired
	// (or is not held) fails the whole commit with ErrLockExpired.
	Acks []SharedAck
	// Fences make the commit conditional on producers it need not write:
	// it fails whole with ErrFenced if one of them moved past its fence.
	Fences []ProducerFence
	// Session is the committing session (0: none given). A store may use
	// it to pace group commit (jetstream: wait for the other sessions
	// that commit steadily), never for what the commit means.
	Session uint32
}

// ProducerFence is a commit's condition on a producer of a topic: the
// producer's last accepted seqno must be below Below (a producer the
// topic does not know, or whose state expired, passes). A writer that
// registers each new instance of itself by writing a higher seqno as the
// producer (the Kafka door's transactional ids: one seqno per epoch)
// fences a commit of an older instance with it, atomically: the check
// and the commit are one decision of the store, on every gateway.
type ProducerFence struct {
	Topic, Producer string
	Below           int64
}

// SharedAck acknowledges messages of one shared consumer in a commit.
type SharedAck struct {
	Topic, Consumer string
	Session         uint32
	Refs            []MsgRef
}

// WriteResult reports a topic write's outcome.
type WriteResult struct {
	Written    int // messages appended
	Duplicates int // messages skipped by seqno dedup
}

// CommitResult has one WriteResult per TopicWrite, in order.
type CommitResult struct {
	Writes []WriteResult
	// Throttle is how long the caller must hold back the commit's
	// acknowledgement for the write-speed limits of the partitions it
	// wrote (0 when none is over its limit). The commit is already
	// durable; the caller waits outside the store.
	Throttle time.Duration
	// Placed says where the commit's messages went: for each write and
	// each partition it appended to, the offset of the first message and
	// how many followed it (one write's messages in one partition get
	// contiguous offsets), in the order they were appended. Duplicates
	// are not placed. A store that cannot say (a cluster's wide
	// transaction) leaves it empty; the Kafka door's Produce answers its
	// base offset from it.
	Placed []Placement
}

// Placement is where some of a commit's messages went: Count messages of
// Writes[Write], at offsets First..First+Count-1 of Partition.
type Placement struct {
	Write     int
	Partition int32
	First     int64
	Count     int
}

// AddPlacement records n messages of write w appended at offset first of
// partition part, extending the last placement when they follow it.
func AddPlacement(ps []Placement, w int, part int32, first int64, n int) []Placement {
	if k := len(ps) - 1; k >= 0 && ps[k].Write == w && ps[k].Partition == part && ps[k].First+int64(ps[k].Count) == first {
		ps[k].Count += n
		return ps
	}
	return append(ps, Placement{Write: w, Partition: part, First: first, Count: n})
}

// ScanRange bounds a partition scan. End < 0 means "to the visible end".
type ScanRange struct {
	Partition int32
	Start     int64 // first offset (clamped up to the partition's start)
	End       int64 // exclusive; -1 = visible end
	// MinWrittenAt skips batches written before it (optional pushdown).
	MinWrittenAt time.Time
}

// Store is the storage interface. Implementations are safe for concurrent
// use.
type Store interface {
	CreateTopic(ctx context.Context, cfg TopicConfig) error
	// AlterTopic applies fn to a copy of the config and stores the result
	// atomically; adding partitions is done by raising MinActivePartitions.
	AlterTopic(ctx context.Context, name string, fn func(*TopicConfig) error) error
	DropTopic(ctx context.Context, name string) error
	Topic(name string) (TopicInfo, error)
	Topics() []TopicInfo
	// SplitPartition splits an active partition of a keyed
	// (auto-partitioned) topic in two at the middle of its key range, as
	// auto-partitioning does when the partition is overloaded.
	SplitPartition(ctx context.Context, topic string, partition int32) error
	// WriteRates returns each partition's write rate (bytes/s, the mean
	// over the topic's stabilization window), indexed by partition ID.
	WriteRates(topic string) ([]float64, error)

	// Commit validates every message (codec supported, size, partition
	// exists), assigns offsets, applies dedup and writes everything in one
	// synced batch. Nothing is written if validation fails.
	Commit(ctx context.Context, req *CommitRequest) (CommitResult, error)

	// Scan calls fn for each visible message of the range in offset order.
	// m and its slices are only valid during the call. fn returns false to
	// stop.
	Scan(ctx context.Context, topic string, r ScanRange, fn func(m *Message) bool) error

	// Producers lists the producers of a topic.
	Producers(topic string) ([]ProducerInfo, error)
	// Producer returns a live producer's dedup state and binding (its
	// Partition is -1 when the partition it was bound to has split: its
	// next write binds it again); ok is false when the topic has no live
	// producer of that id (unknown, expired, or no topic): none of its
	// seqnos is a duplicate yet and it is bound to no partition.
	Producer(topic, producer string) (info ProducerInfo, ok bool)

	// Positions returns a consumer's committed offset for every partition
	// of the topic (partitions without a stored position report their
	// initial one: from read_from at the time the consumer was created, else
	// the partition's start offset). A position below the partition's start
	// offset (retention deleted what it pointed at) reads as the start.
	Positions(topic, consumer string) (map[int32]int64, error)

	// StoredPositions is Positions without the partitions where the
	// consumer has no position of its own: it lists those a commit
	// (PositionUpdate, SetPosition) set and, for a consumer given
	// read_from, the initial ones of the partitions it had then; never
	// one a PositionUpdate's Forget forgot since. (A Kafka group answers
	// -1 for a partition it never committed.)
	StoredPositions(topic, consumer string) (map[int32]int64, error)

	// SetPosition sets a committed offset explicitly (synced). The offset
	// must lie in [start offset, end offset], else ErrOffsetOutOfRange.
	SetPosition(ctx context.Context, topic, consumer string, partition int32, offset int64) error

	// OffsetForTime returns, for each partition, the first offset whose
	// batch was written at or after t (the end offset if none).
	OffsetForTime(topic string, t time.Time) (map[int32]int64, error)

	// Changed returns a channel that is closed the next time new messages
	// become visible in any partition of the topic (or the topic is
	// dropped). Long-polling readers check for data, then wait on it.
	Changed(topic string) (<-chan struct{}, error)

	// RunRetention applies retention to every topic once, as of now, and
	// reports how many messages it deleted. A background loop calls it
	// periodically; tests call it with an injected clock.
	RunRetention(ctx context.Context, now time.Time) (deleted int64, err error)

	SharedStore

	Close() error
}

// ProducerPartitionError is ErrProducerPartition with its details: a
// producer stays in the partition it is bound to, so a message of it that
// names another partition is refused, never written elsewhere.
type ProducerPartitionError struct {
	Producer     string
	Bound, Named int32
}

func (e *ProducerPartitionError) Error() string {
	return fmt.Sprintf("producer %q is bound to partition %d; the message names partition %d", e.Producer, e.Bound, e.Named)
}

// Is makes errors.Is(err, ErrProducerPartition) hold.
func (e *ProducerPartitionError) Is(target error) bool { return target == ErrProducerPartition }

// ProducerInfo is a producer's dedup state.
type ProducerInfo struct {
	ProducerID string
	Partition  int32
	MaxSeqNo   int64
	LastWrite  time.Time
}

// EngineStats are an LSM storage engine's own figures, for operators
// (/metrics): how much the LSM holds, how much work it has done and still
// owes. They are a snapshot; the counters only grow while the store is
// open. The type lives in the contract, not in pebblestore, so that the
// executor can ask any store for them without importing a backend.
type EngineStats struct {
	DiskBytes           uint64 // on-disk size: tables, WAL, manifests
	MemtableBytes       uint64 // memory held by memtables
	L0Files             int64  // files in level 0 (see the thresholds in pebblestore.Open)
	L0Sublevels         int32  // overlapping layers in level 0: a read's extra seeks
	Flushes             int64  // memtables flushed since open
	Compactions         int64  // compactions since open, of every kind
	DeleteOnly          int64  // compactions that dropped whole files without reading them
	CompactionDebtBytes uint64 // estimated bytes compactions still have to rewrite
	CacheBytes          int64  // block cache in use
	CacheHits           int64
	CacheMisses         int64
	WALSyncs            uint64  // fsyncs of the write-ahead log since open
	WALSyncSeconds      float64 // time spent in those fsyncs
	CommitGroups        int64   // batches the committer wrote (one per group commit)
	CommitRequests      int64   // requests those batches carried: / CommitGroups is the group size
	Reclaims            int64   // key ranges of dropped topics compacted away (pebblestore/internal/reclaim)
}

// EngineStatter is implemented by stores that can report EngineStats. It is
// not part of Store so that a backend without an LSM need not fake one.
type EngineStatter interface {
	EngineStats() EngineStats
}

// Readier is implemented by stores that can be not ready while open (the
// cluster store: no leader to answer, a view behind the stream). Ready
// returns nil when the store serves now, or what it waits for.
type Readier interface {
	Ready(ctx context.Context) error
}

// ReadBarrier is implemented by stores whose state a process folds from a
// log others also write (the cluster store): Barrier returns once this
// process has applied everything any process had committed when it was
// called, so a read after it sees every commit acknowledged before it
// began, through whichever gateway (a linearizable read point, as etcd's
// ReadIndex). The embedded store, the only writer of its state, need not
// implement it.
type ReadBarrier interface {
	Barrier(ctx context.Context) error
	// Sync is Barrier that says when it could not reach the store's
	// state (no leader to ask: an election): ErrUnavailable, where
	// Barrier reads the process's view as it is. A read waiting for
	// something another process published uses it to tell "not yet"
	// from "cannot know yet".
	Sync(ctx context.Context) error
}

// WrittenAter tells when a partition's message was written: the cluster
// store from its index of record batches, without a read from the stream;
// sys.consumers asks it for each lagging partition. WrittenAt is the WrittenAt of the message Scan would yield
// first from offset (the first retained at or after it), false when
// there is none.
type WrittenAter interface {
	WrittenAt(topic string, part int32, offset int64) (time.Time, bool)
}
