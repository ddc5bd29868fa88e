// Package kproducer names the topicgate producers behind Kafka's
// idempotent producers, the one place the mapping is spelled: each
// (Kafka producer id, partition) is the topicgate producer
// "kafka/<id>/<partition>" and a record's (epoch, sequence) is its seqno
// epoch·2³² + sequence, so the store's dedup keeps Kafka's exactly-once
// rules. Package kafka writes with these names; package sysview reads
// them back for sys.kafka_producers. It is a leaf: it imports nothing of
// topicgate.
package kproducer

import (
	"fmt"
	"strconv"
	"strings"
)

const prefix = "kafka/"

// Name is the topicgate producer of Kafka producer id's writes to
// partition part.
func Name(id int64, part int32) string { return fmt.Sprintf("%s%d/%d", prefix, id, part) }

// Parse is Name's inverse: ok is false for a producer name Name does not
// make.
func Parse(name string) (id int64, part int32, ok bool) {
	rest, found := strings.CutPrefix(name, prefix)
	if !found {
		return 0, 0, false
	}
	ids, parts, found := strings.Cut(rest, "/")
	if !found {
		return 0, 0, false
	}
	id, err := strconv.ParseInt(ids, 10, 64)
	if err != nil || id < 0 {
		return 0, 0, false
	}
	p, err := strconv.ParseInt(parts, 10, 32)
	if err != nil || p < 0 {
		return 0, 0, false
	}
	if Name(id, int32(p)) != name { // no leading zeros or signs: one spelling per producer
		return 0, 0, false
	}
	return id, int32(p), true
}

// SeqNo is the topicgate seqno of a Kafka record's epoch and sequence.
func SeqNo(epoch int16, seq int32) int64 { return int64(epoch)<<32 | int64(uint32(seq)) }

// Split is SeqNo's inverse.
func Split(seqno int64) (epoch int16, seq int32) {
	return int16(seqno >> 32), int32(uint32(seqno))
}
