package txn

import (
	"errors"
	"testing"
	"time"

	"topicgate/topicstore"
)

func TestAdmit(t *testing.T) {
	stored := map[string]int64{"p": 5}
	lookup := func(topic, producer string) (topicstore.ProducerInfo, bool) {
		v, ok := stored[producer]
		return topicstore.ProducerInfo{MaxSeqNo: v, Partition: 1}, ok && topic == "t"
	}
	msg := func(producer string, seq int64, has bool) topicstore.Message {
		return topicstore.Message{Partition: -1, ProducerID: producer, SeqNo: seq, HasSeqNo: has}
	}
	tx := Begin(1, time.Unix(0, 0), 0)
	for _, c := range []struct {
		topic string
		msgs  []topicstore.Message
		want  int
	}{
		{"t", []topicstore.Message{msg("p", 5, true), msg("p", 6, true), msg("p", 6, true)}, 1},
		{"t", []topicstore.Message{msg("p", 0, false), msg("p", 7, true), msg("p", 8, true)}, 2}, // unnumbered takes 7
		{"t", []topicstore.Message{msg("", 0, false), msg("", 0, false)}, 2},
		{"t", []topicstore.Message{msg("new", 1, true), msg("new", 1, true)}, 1},
		{"u", []topicstore.Message{msg("p", 1, true)}, 1}, // another topic, another producer
	} {
		if got, err := tx.Admit(c.topic, c.msgs, lookup); got != c.want || err != nil {
			t.Errorf("Admit(%s, %v) = %d, %v, want %d", c.topic, c.msgs, got, err, c.want)
		}
	}
	// Bindings: p is stored in partition 1; "fresh" binds where it first
	// names a partition. A refused call records nothing.
	bad := []topicstore.Message{msg("p", 9, true), msg("p", 10, true)}
	bad[1].Partition = 0
	if n, err := tx.Admit("t", bad, lookup); n != 0 || !errors.Is(err, topicstore.ErrProducerPartition) {
		t.Errorf("p in partition 0: %d, %v", n, err)
	}
	ok := []topicstore.Message{msg("p", 9, true), msg("fresh", 1, true), msg("fresh", 2, true)}
	ok[0].Partition, ok[1].Partition, ok[2].Partition = 1, 3, -1
	if n, err := tx.Admit("t", ok, lookup); n != 3 || err != nil {
		t.Errorf("bound partitions: %d, %v", n, err)
	}
	again := []topicstore.Message{msg("fresh", 3, true)}
	again[0].Partition = 2
	var pe *topicstore.ProducerPartitionError
	if _, err := tx.Admit("t", again, lookup); !errors.As(err, &pe) || pe.Bound != 3 || pe.Named != 2 {
		t.Errorf("fresh in partition 2: %v", err)
	}
}
