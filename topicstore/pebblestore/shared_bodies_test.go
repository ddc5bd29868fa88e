package pebblestore

import (
	"bytes"
	"fmt"
	"testing"

	"topicgate/topicstore"
)

// TestBodyCacheBounds checks the cache's own bounds: what it keeps counts
// against bodyCacheBytes and goes back to zero as messages are taken or
// trimmed, a message past the cap is not kept, and a run never grows
// beyond maxRun slots.
func TestBodyCacheBounds(t *testing.T) {
	var c bodyCache
	msg := func(off int64, n int) *topicstore.Message {
		return &topicstore.Message{Offset: off, Body: bytes.Repeat([]byte{'x'}, n), Attrs: []topicstore.Attr{{Key: "k", Value: "v"}}}
	}
	for off := int64(10); off < 20; off++ {
		c.keep(0, msg(off, 100), 50)
	}
	check(t, c.bytes > 0, "bytes counted")
	m, ok := c.take(topicstore.MsgRef{Partition: 0, Offset: 12})
	check(t, ok && m.Offset == 12 && len(m.Body) == 100 && m.Attrs[0].Value == "v", fmt.Sprintf("take 12: %v %+v", ok, m))
	_, ok = c.take(topicstore.MsgRef{Partition: 0, Offset: 12})
	check(t, !ok, "12 is taken once")
	_, ok = c.take(topicstore.MsgRef{Partition: 1, Offset: 12})
	check(t, !ok, "no partition 1")
	c.trim(0, 15) // 10..14 finished
	eq(t, c.runs[0].base, int64(15))
	eq(t, len(c.runs[0].msgs), 5)
	for off := int64(15); off < 20; off++ {
		_, ok := c.take(topicstore.MsgRef{Partition: 0, Offset: off})
		check(t, ok, fmt.Sprintf("take %d", off))
	}
	eq(t, c.bytes, 0)
	eq(t, len(c.runs[0].msgs), 0)

	// A message past the byte cap is not kept.
	c.keep(0, msg(100, bodyCacheBytes), 50)
	eq(t, c.bytes, 0)
	_, ok = c.take(topicstore.MsgRef{Partition: 0, Offset: 100})
	check(t, !ok, "a message over the cap is not kept")

	// A run stays within maxRun slots: a message that far ahead starts it over.
	c.keep(0, msg(200, 10), 50)
	c.keep(0, msg(260, 10), 50)
	eq(t, c.runs[0].base, int64(260))
	eq(t, len(c.runs[0].msgs), 1)
	_, ok = c.take(topicstore.MsgRef{Partition: 0, Offset: 200})
	check(t, !ok, "200 dropped when the run started over")
	c.trim(0, 261)
	eq(t, c.bytes, 0)
}

// TestSharedBodyCache drives a shared consumer whose acquisitions are
// served from the body cache, from the store's reads, and from both at
// once (a released message is read again), and checks each acquired
// message whole, and that the cache is empty once everything is
// acknowledged.
func TestSharedBodyCache(t *testing.T) {
	s := openShared(t, t.TempDir(), nil, 8)
	defer s.Close()
	consumerTopic(t, s, "q", 2, sharedCfg("w", nil))
	want := map[topicstore.MsgRef]string{}
	for p := int32(0); p < 2; p++ {
		var msgs []topicstore.Message
		for i := 0; i < 30; i++ {
			m := body(fmt.Sprintf("p%d-%d", p, i))
			m.Attrs = []topicstore.Attr{{Key: "i", Value: fmt.Sprint(i)}}
			m.Key = []byte(fmt.Sprintf("key%d", i))
			msgs = append(msgs, m)
		}
		commit(t, s, "q", at(p, msgs...)...)
		for i := range 30 {
			want[topicstore.MsgRef{Partition: p, Offset: int64(i)}] = fmt.Sprintf("p%d-%d", p, i)
		}
	}
	checkMsg := func(a topicstore.Acquired) {
		t.Helper()
		r := topicstore.MsgRef{Partition: a.Message.Partition, Offset: a.Message.Offset}
		eq(t, string(a.Message.Body), want[r], r)
		eq(t, a.Message.Attrs, []topicstore.Attr{{Key: "i", Value: fmt.Sprint(r.Offset)}}, r)
		eq(t, string(a.Message.Key), fmt.Sprintf("key%d", r.Offset), r)
	}
	seen := map[topicstore.MsgRef]bool{}
	for round := 0; len(seen) < len(want); round++ {
		got := acquire(t, s, "q", "w", 1, 3)
		check(t, len(got) > 0, fmt.Sprintf("round %d acquired nothing with %d of %d seen", round, len(seen), len(want)))
		if round == 0 {
			_, m, err := s.sharedMgr("q", "w")
			must(t, err)
			n := m.bodies.bytes
			m.mu.Unlock()
			check(t, n > 0, "the fill kept the window's messages")
		}
		var ack, release []topicstore.MsgRef
		for i, a := range got {
			checkMsg(a)
			r := topicstore.MsgRef{Partition: a.Message.Partition, Offset: a.Message.Offset}
			if round%3 == 1 && i == 0 && a.DeliveryCount == 1 {
				release = append(release, r) // read again, from the store, next time
				continue
			}
			ack = append(ack, r)
			seen[r] = true
		}
		act(t, s, "q", "w", 1, topicstore.ActionAck, ack...)
		if len(release) > 0 {
			act(t, s, "q", "w", 1, topicstore.ActionRelease, release...)
		}
	}
	_, err := s.SharedStats("q", "w") // a fill: trims what is finished
	must(t, err)
	_, m, err := s.sharedMgr("q", "w")
	must(t, err)
	n := m.bodies.bytes
	m.mu.Unlock()
	eq(t, n, 0, "bytes kept after everything is acknowledged")
}
