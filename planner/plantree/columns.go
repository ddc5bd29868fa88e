package plantree

// MsgCol identifies a message column of a topic.
type MsgCol uint8

// The message columns, in the order a topic's catalog entry lists them
// (pg_attribute); SELECT * returns StarColumns.
const (
	ColPartition MsgCol = iota
	ColOffset
	ColSeqNo
	ColProducerID
	ColMessageGroupID
	ColCreatedAt
	ColWrittenAt
	ColCodec
	ColAttrs
	ColData
	ColDelay
	ColKey           // a Kafka record's key (issue 28)
	ColHeaders       // a Kafka record's headers (issue 28)
	ColDeliveryCount // shared-consumer reads only
	ColLockedUntil   // shared-consumer reads only
	numMsgCols
)

// NumTopicCols is how many message columns every read of a topic has
// (ColPartition through ColHeaders); shared-consumer reads add
// ColDeliveryCount and ColLockedUntil after them.
const NumTopicCols = int(ColHeaders) + 1

// MsgColumn describes a message column.
type MsgColumn struct {
	Name     string
	Type     Type
	Writable bool // may appear in INSERT/COPY column lists
}

// MsgColumns is indexed by MsgCol.
var MsgColumns = [numMsgCols]MsgColumn{
	ColPartition:      {"partition", TInt8, true},
	ColOffset:         {"offset", TInt8, false},
	ColSeqNo:          {"seqno", TInt8, true},
	ColProducerID:     {"producer_id", TText, true},
	ColMessageGroupID: {"message_group_id", TText, true},
	ColCreatedAt:      {"created_at", TTimestamptz, true},
	ColWrittenAt:      {"written_at", TTimestamptz, false},
	ColCodec:          {"codec", TText, true},
	ColAttrs:          {"attrs", TJSONB, true},
	ColData:           {"data", TBytea, true},
	ColDelay:          {"delay", TInterval, true},
	ColKey:            {"key", TBytea, true},
	ColHeaders:        {"headers", TJSONB, true},
	ColDeliveryCount:  {"delivery_count", TInt4, false},
	ColLockedUntil:    {"locked_until", TTimestamptz, false},
}

// StarColumns is what SELECT * returns from a stateless or streaming read.
// It leaves out delay, key and headers, so that what SELECT * returned
// before they existed stays as it was; a query names them.
var StarColumns = []MsgCol{ColPartition, ColOffset, ColSeqNo, ColProducerID, ColMessageGroupID,
	ColCreatedAt, ColWrittenAt, ColCodec, ColAttrs, ColData}

// YDBAliases maps YDB's metadata names to our columns.
var YDBAliases = map[string]MsgCol{
	"__ydb_offset":           ColOffset,
	"__ydb_partition_id":     ColPartition,
	"__ydb_seq_no":           ColSeqNo,
	"__ydb_create_time":      ColCreatedAt,
	"__ydb_write_time":       ColWrittenAt,
	"__ydb_message_group_id": ColMessageGroupID,
	"__ydb_producer_id":      ColProducerID,
}

// LookupMsgCol resolves a column name (or YDB alias) of a topic.
func LookupMsgCol(name string) (MsgCol, bool) {
	for i, c := range MsgColumns {
		if c.Name == name {
			return MsgCol(i), true
		}
	}
	c, ok := YDBAliases[name]
	return c, ok
}
