package storetest

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/stretchr/testify/require"

	"topicgate/topicstore"
)

var commitTests = []subtest{
	{"Fields", testFields},
	{"Codecs", testCodecs},
	{"Atomicity", testAtomicity},
	{"Dedup", testDedup},
	{"ProducerBinding", testBinding},
	{"ProducerExpiry", testProducerExpiry},
	{"ProducerInactivityPeriod", testProducerInactivityPeriod},
	{"ExplicitPartition", testExplicitPartition},
	{"UnboundWriteOnePartition", testUnboundWrite},
	{"ContiguousFIFO", testContiguous},
	{"Placed", testPlaced},
	{"WriteSpeed", needs(WriteSpeed, testWriteSpeed)},
}

// testFields: every field of a message comes back from a scan; defaults
// fill created_at (now) and the codec (raw).
func testFields(e *env) {
	t := e.t
	e.create("orders/eu", 2)
	created := time.Date(2025, 5, 6, 7, 8, 9, 123456000, time.UTC)
	m := topicstore.Message{Partition: 1, ProducerID: "p1", SeqNo: 7, HasSeqNo: true, MessageGroupID: "g",
		CreatedAt: created, Codec: topicstore.CodecZstd, Attrs: []topicstore.Attr{{Key: "k", Value: "v"}, {Key: "k2", Value: "v2"}},
		Body: []byte("hello"), Delay: 3 * time.Second}
	e.clk.Advance(time.Second)
	require.Equal(t, topicstore.WriteResult{Written: 2}, e.commit("orders/eu", m, topicstore.Message{Partition: 0, Body: []byte("second")}))
	msgs := e.scanMsgs("orders/eu", part(1))
	require.Len(t, msgs, 1)
	g := msgs[0]
	require.Equal(t, []any{int32(1), int64(0), "p1", int64(7), true, "g", topicstore.CodecZstd, []topicstore.Attr{{Key: "k", Value: "v"}, {Key: "k2", Value: "v2"}}, 3 * time.Second, "hello"},
		[]any{g.Partition, g.Offset, g.ProducerID, g.SeqNo, g.HasSeqNo, g.MessageGroupID, g.Codec, g.Attrs, g.Delay, string(g.Body)})
	require.True(t, g.CreatedAt.Equal(created), "CreatedAt %v", g.CreatedAt)
	require.True(t, g.WrittenAt.Equal(e.clk.Now()), "WrittenAt %v", g.WrittenAt)

	m0 := e.scanMsgs("orders/eu", part(0))
	require.Len(t, m0, 1)
	require.Equal(t, "second", string(m0[0].Body))
	require.True(t, m0[0].CreatedAt.Equal(e.clk.Now()), "default CreatedAt is now: %v", m0[0].CreatedAt)
	require.Equal(t, topicstore.CodecRaw, m0[0].Codec)
	require.Nil(t, m0[0].Attrs)
	require.False(t, m0[0].HasSeqNo)

	p1 := e.info("orders/eu").Partitions[1]
	require.Equal(t, [2]int64{1, 1}, [2]int64{p1.EndOffset, p1.Messages})
	require.Greater(t, p1.Bytes, int64(0))
	require.Equal(t, p1.Bytes, p1.WrittenBytes, "nothing deleted yet")
	require.True(t, p1.LastWrite.Equal(e.clk.Now()), "LastWrite %v", p1.LastWrite)
}

// testCodecs: a body is stored compressed with its codec and Decode
// restores it.
func testCodecs(e *env) {
	t := e.t
	e.create("t", 1)
	data := bytes.Repeat([]byte("compressible data "), 1000)
	for _, c := range topicstore.AllCodecs {
		e.commit("t", topicstore.Message{Partition: 0, Codec: c, Body: data})
	}
	n := 0
	require.NoError(t, e.s.Scan(ctx, "t", part(0), func(m *topicstore.Message) bool {
		require.Equal(t, topicstore.AllCodecs[n], m.Codec)
		if m.Codec != topicstore.CodecRaw {
			require.Less(t, len(m.Body), len(data)/4, "%s: Body holds the stored, compressed bytes", m.Codec)
		}
		d, err := m.Decode()
		require.NoError(t, err)
		require.True(t, bytes.Equal(data, d), "%s round trip", m.Codec)
		n++
		return true
	}))
	require.Equal(t, len(topicstore.AllCodecs), n)
}

// testAtomicity: a commit with one bad message, in any of its writes,
// writes nothing at all, positions included.
func testAtomicity(e *env) {
	t := e.t
	require.NoError(t, e.s.CreateTopic(ctx, topicstore.TopicConfig{Name: "t", MinActivePartitions: 2,
		SupportedCodecs: []topicstore.Codec{topicstore.CodecRaw, topicstore.CodecZstd}}))
	e.create("u", 1, topicstore.ConsumerConfig{Name: "c"})
	e.commit("u", body("before"))
	ok := topicstore.TopicWrite{Topic: "u", Messages: []topicstore.Message{body("fine")}}
	pos := []topicstore.PositionUpdate{{Topic: "u", Consumer: "c", Partition: 0, Offset: 1, Expect: -1}}
	for _, c := range []struct {
		target error
		bad    topicstore.TopicWrite
	}{
		{topicstore.ErrCodecNotSupported, topicstore.TopicWrite{Topic: "t", Messages: []topicstore.Message{body("x"), {Partition: -1, Codec: topicstore.CodecGzip, Body: []byte("y")}}}},
		{topicstore.ErrCodecNotSupported, topicstore.TopicWrite{Topic: "t", Messages: []topicstore.Message{{Partition: -1, Codec: 9, Body: []byte("y")}}}},
		{topicstore.ErrMessageTooLarge, topicstore.TopicWrite{Topic: "t", Messages: []topicstore.Message{{Partition: -1, Body: make([]byte, topicstore.MaxMessageSize+1)}}}},
		{topicstore.ErrPartitionNotFound, topicstore.TopicWrite{Topic: "t", Messages: []topicstore.Message{{Partition: 2, Body: []byte("y")}}}},
		{topicstore.ErrTopicNotFound, topicstore.TopicWrite{Topic: "nope", Messages: []topicstore.Message{body("y")}}},
	} {
		_, err := e.s.Commit(ctx, &topicstore.CommitRequest{Writes: []topicstore.TopicWrite{ok, c.bad}, Positions: pos})
		require.ErrorIs(t, err, c.target)
	}
	require.Equal(t, []int64{0, 0}, e.ends("t"))
	require.Equal(t, []int64{1}, e.ends("u"))
	require.Equal(t, map[int32]int64{0: 0}, e.positions("u", "c"), "the failed commits' position update was not applied")
	// The largest allowed message is accepted.
	require.Equal(t, 1, e.commit("t", topicstore.Message{Partition: 0, Body: make([]byte, topicstore.MaxMessageSize)}).Written)
}

// testDedup: a producer's seqno is written at most once; a message of a
// producer without seqno gets the next one.
func testDedup(e *env) {
	t := e.t
	e.create("t", 3)
	require.Equal(t, topicstore.WriteResult{Written: 2, Duplicates: 1}, e.commit("t", pmsg("a", 1, "a1"), pmsg("a", 1, "dup"), pmsg("a", 4, "a4")))
	require.Equal(t, topicstore.WriteResult{Written: 1, Duplicates: 1}, e.commit("t", pmsg("a", 2, "late"), pmsg("a", 0, "auto")))
	require.Equal(t, topicstore.WriteResult{Duplicates: 1}, e.commit("t", pmsg("a", 5, "dup")))
	ps, err := e.s.Producers("t")
	require.NoError(t, err)
	require.Len(t, ps, 1)
	require.Equal(t, []any{"a", int64(5)}, []any{ps[0].ProducerID, ps[0].MaxSeqNo})
	require.True(t, ps[0].LastWrite.Equal(e.clk.Now()), "LastWrite %v", ps[0].LastWrite)
	p, ok := e.s.Producer("t", "a")
	require.True(t, ok)
	require.Equal(t, ps[0], p)
	_, ok = e.s.Producer("t", "nobody")
	require.False(t, ok)
	_, ok = e.s.Producer("nope", "a")
	require.False(t, ok)

	msgs := e.scanMsgs("t", part(ps[0].Partition))
	var got []string
	for _, m := range msgs {
		got = append(got, fmt.Sprintf("%d:%s:%d", m.Offset, m.Body, m.SeqNo))
	}
	require.Equal(t, []string{"0:a1:1", "1:a4:4", "2:auto:5"}, got)
	for _, m := range msgs {
		require.True(t, m.HasSeqNo, "a producer's messages carry their seqno")
	}
}

// testBinding: new producers bind round robin and stay where they are.
func testBinding(e *env) {
	t := e.t
	e.create("t", 3)
	for _, p := range []string{"a", "b", "c", "d"} {
		e.commit("t", pmsg(p, 1, p+"1"))
	}
	parts := map[string]int32{}
	ps, err := e.s.Producers("t")
	require.NoError(t, err)
	var ids []string
	for _, p := range ps {
		ids = append(ids, p.ProducerID)
		parts[p.ProducerID] = p.Partition
	}
	require.Equal(t, []string{"a", "b", "c", "d"}, ids, "Producers is sorted by id")
	require.ElementsMatch(t, []int32{0, 1, 2}, []int32{parts["a"], parts["b"], parts["c"]}, "round robin")
	require.Equal(t, parts["a"], parts["d"], "round robin wraps around")
	for _, p := range []string{"b", "b", "a"} {
		e.commit("t", pmsg(p, 0, p+"n"))
	}
	b := e.scan("t", part(parts["b"]))
	require.Equal(t, []string{"0:b1", "1:bn", "2:bn"}, b, "a producer stays in its partition, in order")
}

// testProducerExpiry: a producer without writes for DefaultProducerExpiry
// is forgotten: binding and seqnos.
func testProducerExpiry(e *env) {
	t := e.t
	e.create("t", 3)
	for _, p := range []string{"a", "b"} {
		e.commit("t", pmsg(p, 5, p))
	}
	e.clk.Advance(topicstore.DefaultProducerExpiry - 24*time.Hour)
	e.commit("t", pmsg("a", 6, "a6"))
	e.clk.Advance(2 * 24 * time.Hour)
	ps, err := e.s.Producers("t")
	require.NoError(t, err)
	require.Len(t, ps, 1)
	require.Equal(t, "a", ps[0].ProducerID)
	_, ok := e.s.Producer("t", "b")
	require.False(t, ok, "b expired")
	require.Equal(t, topicstore.WriteResult{Written: 1}, e.commit("t", pmsg("b", 1, "b-again")), "an expired producer starts over")
	require.Equal(t, topicstore.WriteResult{Duplicates: 1}, e.commit("t", pmsg("a", 6, "dup")), "a live one keeps its seqnos")
}

// testProducerInactivityPeriod: a topic's producer_inactivity_period
// replaces the default for its producers, also once altered; retention
// runs forget the expired ones for good.
func testProducerInactivityPeriod(e *env) {
	t := e.t
	e.createCfg(topicstore.TopicConfig{Name: "t", MinActivePartitions: 2, ProducerExpiry: time.Hour})
	e.create("u", 2)
	for _, topic := range []string{"t", "u"} {
		e.commit(topic, pmsg("a", 5, "a"))
	}
	e.clk.Advance(2 * time.Hour)
	e.retain(e.clk.Now())
	_, ok := e.s.Producer("t", "a")
	require.False(t, ok, "expired after t's hour")
	_, ok = e.s.Producer("u", "a")
	require.True(t, ok, "u keeps the default")
	require.Equal(t, topicstore.WriteResult{Written: 1}, e.commit("t", pmsg("a", 1, "again")), "an expired producer starts over")

	e.alter("t", func(c *topicstore.TopicConfig) { c.ProducerExpiry = 10 * time.Hour })
	e.clk.Advance(2 * time.Hour)
	e.retain(e.clk.Now())
	_, ok = e.s.Producer("t", "a")
	require.True(t, ok, "the altered period keeps it")
	require.Equal(t, topicstore.WriteResult{Duplicates: 1}, e.commit("t", pmsg("a", 1, "dup")))
	ti, err := e.s.Topic("t")
	require.NoError(t, err)
	require.Equal(t, 10*time.Hour, ti.Config.ProducerExpiry)
}

// testExplicitPartition: an explicit partition binds a new producer; a
// bound producer naming another partition is refused, whole.
func testExplicitPartition(e *env) {
	t := e.t
	e.create("t", 3)
	e.commit("t", at(2, pmsg("p", 1, "p1"))...)
	p, ok := e.s.Producer("t", "p")
	require.True(t, ok)
	require.Equal(t, int32(2), p.Partition)

	err := e.commitErr(topicstore.TopicWrite{Topic: "t", Messages: append(at(2, pmsg("p", 2, "ok")), at(1, pmsg("p", 3, "elsewhere"))...)})
	require.ErrorIs(t, err, topicstore.ErrProducerPartition)
	var ppe *topicstore.ProducerPartitionError
	require.True(t, errors.As(err, &ppe), "%T", err)
	require.Equal(t, topicstore.ProducerPartitionError{Producer: "p", Bound: 2, Named: 1}, *ppe)
	// A new producer's first explicit message binds it for the rest of the write.
	err = e.commitErr(topicstore.TopicWrite{Topic: "t", Messages: append(at(0, pmsg("q", 1, "q1")), at(1, pmsg("q", 2, "q2"))...)})
	require.ErrorIs(t, err, topicstore.ErrProducerPartition)
	require.Equal(t, []int64{0, 0, 1}, e.ends("t"), "refused writes leave nothing")
	_, ok = e.s.Producer("t", "q")
	require.False(t, ok, "a refused write binds nobody")
	e.commit("t", pmsg("p", 2, "follows"))
	require.Equal(t, []string{"0:p1", "1:follows"}, e.scan("t", part(2)))
}

// testUnboundWrite: the messages without producer of one write go to one
// partition, in order.
func testUnboundWrite(e *env) {
	t := e.t
	e.create("t", 3)
	for round := 0; round < 3; round++ {
		var msgs []topicstore.Message
		for i := 0; i < 5; i++ {
			msgs = append(msgs, body(fmt.Sprintf("r%d-%d", round, i)))
		}
		e.commit("t", msgs...)
	}
	total := 0
	for p := int32(0); p < 3; p++ {
		got := e.scan("t", part(p))
		require.Equal(t, 0, len(got)%5, "partition %d holds whole writes: %v", p, got)
		for i := 0; i < len(got); i += 5 {
			var off, r, j int
			_, err := fmt.Sscanf(got[i], "%d:r%d-%d", &off, &r, &j)
			require.NoError(t, err)
			for k := 0; k < 5; k++ {
				require.Equal(t, fmt.Sprintf("%d:r%d-%d", off+k, r, k), got[i+k])
			}
		}
		total += len(got)
	}
	require.Equal(t, 15, total)
}

// testContiguous: concurrent writers to one partition get contiguous
// offsets; each request's messages stay together and in order, each
// writer's requests in order, and a concurrent reader never sees a gap.
func testContiguous(e *env) {
	t := e.t
	e.create("t", 1)
	const writers, commits = 8, 30
	stop := make(chan struct{})
	readerErr := make(chan error, 1)
	go func() {
		defer close(readerErr)
		for {
			select {
			case <-stop:
				return
			default:
			}
			next := int64(0)
			err := e.s.Scan(ctx, "t", part(0), func(m *topicstore.Message) bool {
				if m.Offset != next {
					readerErr <- fmt.Errorf("offset %d, want %d", m.Offset, next)
					return false
				}
				next++
				return true
			})
			if err != nil {
				readerErr <- err
				return
			}
		}
	}()
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := 0; w < writers; w++ {
		wg.Go(func() {
			for i := 0; i < commits; i++ {
				var msgs []topicstore.Message
				for j := 0; j < 1+i%3; j++ {
					msgs = append(msgs, body(fmt.Sprintf("%02d-%03d-%d", w, i, j)))
				}
				if err := e.commitErr(topicstore.TopicWrite{Topic: "t", Messages: msgs}); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	for err := range readerErr {
		require.NoError(t, err)
	}
	got := e.scan("t", part(0))
	require.Len(t, got, writers*(commits/3)*6)
	last := map[int]string{}
	for i, g := range got {
		var off, w, c, j int
		_, err := fmt.Sscanf(g, "%d:%02d-%03d-%d", &off, &w, &c, &j)
		require.NoError(t, err)
		require.Equal(t, i, off)
		cur := fmt.Sprintf("%03d-%d", c, j)
		require.Less(t, last[w], cur, "writer %d's order", w)
		if j > 0 {
			require.Equal(t, fmt.Sprintf("%02d-%03d-%d", w, c, j-1), got[i-1][len(got[i-1])-8:], "a request's messages are contiguous")
		}
		last[w] = cur
	}
	require.Equal(t, []int64{int64(len(got))}, e.ends("t"))
}

// testWriteSpeed: a topic with an explicit write speed reports, past its
// burst, how long the caller must hold the acknowledgement back; the
// default speed throttles nothing.
func testWriteSpeed(e *env) {
	t := e.t
	e.createCfg(topicstore.TopicConfig{Name: "slow", PartitionWriteSpeedBytes: 1000})
	e.create("free", 1)
	payload := make([]byte, 1500)
	res := e.commitReq(&topicstore.CommitRequest{Writes: []topicstore.TopicWrite{{Topic: "free", Messages: []topicstore.Message{{Partition: 0, Body: payload}}}}})
	require.Zero(t, res.Throttle, "the default speed throttles nothing")
	res = e.commitReq(&topicstore.CommitRequest{Writes: []topicstore.TopicWrite{{Topic: "slow", Messages: []topicstore.Message{{Partition: 0, Body: payload}}}}})
	// 1500 bytes and more stored against a burst of one second (1000 bytes)
	// at 1000 B/s: at least half a second of debt, and not much more.
	require.GreaterOrEqual(t, res.Throttle, 500*time.Millisecond)
	require.Less(t, res.Throttle, 2*time.Second)
	info := e.info("slow")
	require.Equal(t, res.Throttle, info.Partitions[0].Throttled)
	require.Equal(t, res.Throttle, info.Throttled)
	require.Zero(t, e.info("free").Throttled)
}

// testPlaced: a commit says where its messages went (CommitResult.Placed):
// per write and partition the first offset and the count, duplicates
// left out, in the order appended.
func testPlaced(e *env) {
	t := e.t
	e.create("a", 2)
	e.create("b", 1)
	e.commit("a", at(1, body("x"), body("y"))...)
	res := e.commitReq(&topicstore.CommitRequest{Writes: []topicstore.TopicWrite{
		{Topic: "a", Messages: append(at(1, body("1"), body("2")), at(0, body("3"))...)},
		{Topic: "b", Messages: at(0, body("4"), body("5"), body("6"))},
	}})
	require.Equal(t, []topicstore.Placement{
		{Write: 0, Partition: 1, First: 2, Count: 2},
		{Write: 0, Partition: 0, First: 0, Count: 1},
		{Write: 1, Partition: 0, First: 0, Count: 3},
	}, res.Placed)
	res = e.commitReq(&topicstore.CommitRequest{Writes: []topicstore.TopicWrite{
		{Topic: "b", Messages: []topicstore.Message{pmsg("p", 1, "a"), pmsg("p", 1, "dup"), pmsg("p", 2, "b")}},
	}})
	require.Equal(t, []topicstore.Placement{{Write: 0, Partition: 0, First: 3, Count: 2}}, res.Placed)
}
