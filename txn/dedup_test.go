package txn

import (
	"testing"
	"time"

	"topicgate/topicstore"
)

func TestAdmit(t *testing.T) {
	stored := map[string]int64{"p": 5}
	lookup := func(topic, producer string) (int64, bool) {
		v, ok := stored[producer]
		return v, ok && topic == "t"
	}
	msg := func(producer string, seq int64, has bool) topicstore.Message {
		return topicstore.Message{ProducerID: producer, SeqNo: seq, HasSeqNo: has}
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
		if got := tx.Admit(c.topic, c.msgs, lookup); got != c.want {
			t.Errorf("Admit(%s, %v) = %d, want %d", c.topic, c.msgs, got, c.want)
		}
	}
}
