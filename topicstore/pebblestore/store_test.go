package pebblestore

import (
	"bytes"
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"topicgate/topicstore"
)

var ctx = context.Background()

// testClock is an injectable clock.
type testClock struct{ ns atomic.Int64 }

func newTestClock() *testClock {
	c := &testClock{}
	c.ns.Store(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).UnixNano())
	return c
}
func (c *testClock) Now() time.Time          { return time.Unix(0, c.ns.Load()).UTC() }
func (c *testClock) Advance(d time.Duration) { c.ns.Add(int64(d)) }

func openTest(t testing.TB, dir string, clk *testClock) *PebbleStore {
	t.Helper()
	opts := Options{MemTableSize: 4 << 20, CacheSize: 8 << 20, RetentionInterval: -1}
	if clk != nil {
		opts.Clock = clk.Now
	}
	s, err := Open(dir, opts)
	must(t, err)
	return s
}

func newStore(t testing.TB, clk *testClock) *PebbleStore {
	s := openTest(t, t.TempDir(), clk)
	t.Cleanup(func() { s.Close() })
	return s
}

func createTopic(t testing.TB, s *PebbleStore, name string, parts int, codecs ...topicstore.Codec) {
	t.Helper()
	must(t, s.CreateTopic(ctx, topicstore.TopicConfig{Name: name, MinActivePartitions: parts, SupportedCodecs: codecs}))
}

func commit(t testing.TB, s *PebbleStore, topic string, msgs ...topicstore.Message) topicstore.WriteResult {
	t.Helper()
	res, err := s.Commit(ctx, &topicstore.CommitRequest{Writes: []topicstore.TopicWrite{{Topic: topic, Messages: msgs}}})
	must(t, err)
	return res.Writes[0]
}

func body(s string) topicstore.Message { return topicstore.Message{Partition: -1, Body: []byte(s)} }

func pmsg(producer string, seq int64, s string) topicstore.Message {
	return topicstore.Message{Partition: -1, ProducerID: producer, SeqNo: seq, HasSeqNo: seq != 0, Body: []byte(s)}
}

// scanAll returns "offset:body" of a scan, and the messages (copied).
func scanAll(t testing.TB, s *PebbleStore, topic string, r topicstore.ScanRange) ([]string, []topicstore.Message) {
	t.Helper()
	var out []string
	var msgs []topicstore.Message
	must(t, s.Scan(ctx, topic, r, func(m *topicstore.Message) bool {
		data, err := m.Decode()
		must(t, err)
		out = append(out, fmt.Sprintf("%d:%s", m.Offset, data))
		c := *m
		c.Body = bytes.Clone(data)
		c.Attrs = append([]topicstore.Attr(nil), m.Attrs...)
		msgs = append(msgs, c)
		return true
	}))
	return out, msgs
}

func part(p int32) topicstore.ScanRange { return topicstore.ScanRange{Partition: p, End: -1} }

func TestBindingRoundRobinAndExpiry(t *testing.T) {
	clk := newTestClock()
	dir := t.TempDir()
	s := openTest(t, dir, clk)
	defer func() { s.Close() }()
	createTopic(t, s, "t", 3)
	for _, p := range []string{"a", "b", "c", "d"} {
		commit(t, s, "t", pmsg(p, 1, p))
	}
	parts := func() map[string]int32 {
		ps, err := s.Producers("t")
		must(t, err)
		m := map[string]int32{}
		for _, p := range ps {
			m[p.ProducerID] = p.Partition
		}
		return m
	}
	eq(t, parts(), map[string]int32{"a": 0, "b": 1, "c": 2, "d": 0})
	// Bindings stick.
	commit(t, s, "t", pmsg("b", 2, "b2"))
	eq(t, parts()["b"], int32(1))
	// 13 days later a writes again; b, c, d expire at 14 days.
	clk.Advance(13 * 24 * time.Hour)
	commit(t, s, "t", pmsg("a", 2, "a2"))
	clk.Advance(2 * 24 * time.Hour)
	eq(t, parts(), map[string]int32{"a": 0})
	// An expired producer starts over: new binding, seqno state forgotten.
	eq(t, commit(t, s, "t", pmsg("c", 1, "c-again")), topicstore.WriteResult{Written: 1})
	// Reopen: expired producers are not reloaded, live ones are.
	s.Close()
	s = openTest(t, dir, clk)
	eq(t, len(parts()), 2)
	eq(t, commit(t, s, "t", pmsg("a", 2, "dup")), topicstore.WriteResult{Duplicates: 1})
}
