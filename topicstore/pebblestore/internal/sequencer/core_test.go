package sequencer

import (
	"encoding/binary"
	"fmt"
	"strings"
	"testing"
	"time"

	"topicgate/topicstore"
	"topicgate/topicstore/pebblestore/internal/keys"
)

// Scripted tests of the deterministic committer core: requests in, batches
// (offsets, seqnos, bodies), producer records and results out. No Pebble, no
// goroutines.

func newCore(parts ...int) *State {
	s := &State{Topics: map[uint64]*Topic{}, Expiry: time.Hour}
	for i, n := range parts {
		s.Topics[uint64(i+1)] = &Topic{ID: uint64(i + 1), Parts: make([]Partition, n)}
	}
	return s
}

// msg builds a pending message: "body", "body@p" (explicit partition),
// "prod:body", "prod#seq:body".
func msg(spec string) Msg {
	m := Msg{Partition: -1}
	if i := strings.LastIndex(spec, "@"); i >= 0 {
		fmt.Sscan(spec[i+1:], &m.Partition)
		spec = spec[:i]
	}
	if i := strings.Index(spec, ":"); i >= 0 {
		prod := spec[:i]
		spec = spec[i+1:]
		if j := strings.Index(prod, "#"); j >= 0 {
			fmt.Sscan(prod[j+1:], &m.SeqNo)
			m.HasSeqNo = true
			prod = prod[:j]
		}
		m.ProducerID = prod
	}
	mm := topicstore.Message{ProducerID: m.ProducerID}
	m.Tail = topicstore.AppendTail(nil, &mm, topicstore.CodecRaw, []byte(spec), time.Unix(0, 0))
	return m
}

func write(topic uint64, specs ...string) Write {
	w := Write{TopicID: topic}
	for _, s := range specs {
		w.Msgs = append(w.Msgs, msg(s))
	}
	return w
}

// render prints a group's output in a stable text form.
func render(t *testing.T, out Output) string {
	var sb strings.Builder
	for _, kv := range out.Sets {
		switch {
		case keys.HasPrefix(kv.Key, keys.PrefixMessages):
			k := kv.Key[len(keys.PrefixMessages):]
			h, payload, err := topicstore.DecodeBatchHeader(kv.Value)
			must(t, err)
			must(t, topicstore.CheckCRC(h, payload))
			eq(t, h.Base, int64(binary.BigEndian.Uint64(k[12:])), "key/base mismatch")
			fmt.Fprintf(&sb, "batch t%d/p%d base=%d cum=%d:", binary.BigEndian.Uint64(k), binary.BigEndian.Uint32(k[8:]), h.Base, h.CumBefore)
			var d topicstore.MsgDecoder
			for i := 0; i < h.Count; i++ {
				var e []byte
				e, payload, err = topicstore.NextEntry(payload)
				must(t, err)
				m, err := d.Decode(e)
				must(t, err)
				fmt.Fprintf(&sb, " %s", m.Body)
				if m.HasSeqNo {
					fmt.Fprintf(&sb, "#%d", m.SeqNo)
				}
			}
			eq(t, len(payload), 0, "trailing payload")
		case keys.HasPrefix(kv.Key, keys.PrefixProducer):
			ps, err := DecodeProducer(kv.Value)
			must(t, err)
			fmt.Fprintf(&sb, "producer t%d/%s p%d max=%d", binary.BigEndian.Uint64(kv.Key[2:]), kv.Key[10:], ps.Part, ps.MaxSeqNo)
		case keys.HasPrefix(kv.Key, keys.PrefixPositions):
			id, p, c, off, err := keys.ParsePosition(kv.Key, kv.Value)
			must(t, err)
			fmt.Fprintf(&sb, "position t%d/p%d/%s=%d", id, p, c, off)
		}
		sb.WriteString("\n")
	}
	for i, o := range out.Outcomes {
		if o.Err != nil {
			fmt.Fprintf(&sb, "req%d: %v\n", i, o.Err)
			continue
		}
		fmt.Fprintf(&sb, "req%d:", i)
		for _, w := range o.Result.Writes {
			fmt.Fprintf(&sb, " %d/%d", w.Written, w.Duplicates)
		}
		sb.WriteString("\n")
	}
	return sb.String()
}

type step struct {
	at   time.Duration // clock, relative to t0
	reqs [][]Write
	want string
}

func runSteps(t *testing.T, s *State, steps []step) {
	t0 := time.Unix(1_700_000_000, 0)
	for i, st := range steps {
		got := render(t, s.Apply(writesOnly(st.reqs), t0.Add(st.at)))
		want := strings.TrimLeft(st.want, "\n")
		if got != want {
			t.Fatalf("step %d:\ngot:\n%s\nwant:\n%s", i, got, want)
		}
	}
}

func req(ws ...Write) []Write { return ws }

func writesOnly(reqs [][]Write) []Request {
	out := make([]Request, len(reqs))
	for i, ws := range reqs {
		out[i] = Request{Writes: ws}
	}
	return out
}

func TestCoreContiguousOffsets(t *testing.T) {
	runSteps(t, newCore(1), []step{
		{reqs: [][]Write{req(write(1, "a", "b")), req(write(1, "c")), req(write(1, "d", "e"))}, want: `
batch t1/p0 base=0 cum=0: a b c d e
req0: 2/0
req1: 1/0
req2: 2/0
`},
		{reqs: [][]Write{req(write(1, "f"))}, want: `
batch t1/p0 base=5 cum=45: f
req0: 1/0
`},
	})
}

func TestCoreRoundRobinBinding(t *testing.T) {
	runSteps(t, newCore(3), []step{
		{reqs: [][]Write{req(write(1, "a:1", "b:1", "c:1", "d:1", "a:2"))}, want: `
batch t1/p0 base=0 cum=0: 1#1 1#1 2#2
batch t1/p1 base=0 cum=0: 1#1
batch t1/p2 base=0 cum=0: 1#1
producer t1/a p0 max=2
producer t1/b p1 max=1
producer t1/c p2 max=1
producer t1/d p0 max=1
req0: 5/0
`},
		// Writes without producer: one round-robin partition per group
		// and topic, for every write and request in it (sticky).
		{reqs: [][]Write{req(write(1, "x", "y"), write(1, "z")), req(write(1, "w"))}, want: `
batch t1/p1 base=1 cum=11: x y z w
req0: 2/0 1/0
req1: 1/0
`},
		// The next group takes the next partition.
		{reqs: [][]Write{req(write(1, "v"))}, want: `
batch t1/p2 base=1 cum=11: v
req0: 1/0
`},
	})
}

func TestCoreDedup(t *testing.T) {
	runSteps(t, newCore(1), []step{
		// Gaps allowed; duplicates inside one request skipped.
		{reqs: [][]Write{req(write(1, "a#1:m1", "a#1:dup", "a#5:m5", "a#3:old"))}, want: `
batch t1/p0 base=0 cum=0: m1#1 m5#5
producer t1/a p0 max=5
req0: 2/2
`},
		// Across groups and requests; auto seqno continues from max.
		{reqs: [][]Write{req(write(1, "a#5:again", "a#6:m6")), req(write(1, "a:auto", "a#7:dup7"))}, want: `
batch t1/p0 base=2 cum=24: m6#6 auto#7
producer t1/a p0 max=7
req0: 1/1
req1: 1/1
`},
		// All duplicates: nothing to write.
		{reqs: [][]Write{req(write(1, "a#2:x"))}, want: `
req0: 0/1
`},
		// Seqno without producer: stored, no dedup.
		{reqs: [][]Write{req(write(1, "#1:s", "#1:s"))}, want: `
batch t1/p0 base=4 cum=50: s#1 s#1
req0: 2/0
`},
	})
}

func TestCoreExplicitPartition(t *testing.T) {
	runSteps(t, newCore(3), []step{
		{reqs: [][]Write{req(write(1, "a#1:x", "b#1:y@2"))}, want: `
batch t1/p0 base=0 cum=0: x#1
batch t1/p2 base=0 cum=0: y#1
producer t1/a p0 max=1
producer t1/b p2 max=1
req0: 2/0
`},
		// a is bound to 0: a message of it naming partition 1 refuses the
		// whole request; naming its own partition is fine.
		{reqs: [][]Write{req(write(1, "a#2:e@1", "a#3:f")), req(write(1, "a#2:e@0", "a#2:dup@0", "a#3:f"))}, want: `
batch t1/p0 base=1 cum=11: e#2 f#3
producer t1/a p0 max=3
req0: producer "a" is bound to partition 0; the message names partition 1
req1: 2/1
`},
		// A new producer is bound where its first explicit message goes; a
		// later message of the same request naming another is refused.
		{reqs: [][]Write{req(write(1, "c#1:x@1", "c#2:y@2"))}, want: `
req0: producer "c" is bound to partition 1; the message names partition 2
`},
	})
}

func TestCoreExpiry(t *testing.T) {
	runSteps(t, newCore(2), []step{
		{reqs: [][]Write{req(write(1, "a#10:x"))}, want: `
batch t1/p0 base=0 cum=0: x#10
producer t1/a p0 max=10
req0: 1/0
`},
		{at: 50 * time.Minute, reqs: [][]Write{req(write(1, "a#10:dup"))}, want: `
req0: 0/1
`},
		// More than an hour without writes: a new binding, dedup state gone.
		{at: 3 * time.Hour, reqs: [][]Write{req(write(1, "a#1:y"))}, want: `
batch t1/p1 base=0 cum=0: y#1
producer t1/a p1 max=1
req0: 1/0
`},
	})
}

func TestCoreRejectsWholeRequest(t *testing.T) {
	runSteps(t, newCore(1, 1), []step{
		// Topic 3 does not exist (dropped): req0 is rejected entirely, req1 applies.
		{reqs: [][]Write{req(write(1, "a#1:x"), write(3, "y")), req(write(2, "z"), write(1, "w@0"))}, want: `
batch t2/p0 base=0 cum=0: z
batch t1/p0 base=0 cum=0: w
req0: topic does not exist
req1: 1/0 1/0
`},
		{reqs: [][]Write{req(write(1, "q@5"))}, want: `
req0: partition does not exist
`},
	})
}

func TestCoreSplitsLargeBatches(t *testing.T) {
	s := newCore(1)
	big := strings.Repeat("x", 12<<10)
	out := s.Apply(writesOnly([][]Write{req(write(1, big, big, big)), req(write(1, big, "small"))}), time.Unix(0, 0))
	var bases []int64
	var cum int64
	for _, kv := range out.Sets {
		h, payload, err := topicstore.DecodeBatchHeader(kv.Value)
		must(t, err)
		eq(t, h.CumBefore, cum)
		cum += int64(len(payload))
		bases = append(bases, h.Base)
	}
	eq(t, bases, []int64{0, 3})
	eq(t, out.Publish[1].End, int64(5))
	eq(t, s.Topics[1].Parts[0], Partition{End: 5, EndCum: cum})
}
