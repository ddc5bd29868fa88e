package kafka

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestHasErrorCode: an error code is found at any level of an answer,
// the hot APIs' and the others' (by reflection), and none is found in an
// answer without one.
func TestHasErrorCode(t *testing.T) {
	lo := kmsg.NewPtrListOffsetsResponse()
	lt := kmsg.NewListOffsetsResponseTopic()
	lp := kmsg.NewListOffsetsResponseTopicPartition()
	lt.Partitions = append(lt.Partitions, lp)
	lo.Topics = append(lo.Topics, lt)
	if hasErrorCode(lo) {
		t.Fatal("ListOffsets without an error reported one")
	}
	lo.Topics[0].Partitions[0].ErrorCode = 3
	if !hasErrorCode(lo) {
		t.Fatal("ListOffsets partition error not found")
	}
	fe := kmsg.NewPtrFetchResponse()
	ft := kmsg.NewFetchResponseTopic()
	fp := kmsg.NewFetchResponseTopicPartition()
	fp.RecordBatches = []byte{1, 2, 3}
	ft.Partitions = append(ft.Partitions, fp)
	fe.Topics = append(fe.Topics, ft)
	if hasErrorCode(fe) {
		t.Fatal("Fetch without an error reported one")
	}
	fe.Topics[0].Partitions[0].ErrorCode = 1
	if !hasErrorCode(fe) {
		t.Fatal("Fetch partition error not found")
	}
	jg := kmsg.NewPtrJoinGroupResponse()
	jg.ErrorCode = 27
	if !hasErrorCode(jg) {
		t.Fatal("JoinGroup top-level error not found")
	}
}
