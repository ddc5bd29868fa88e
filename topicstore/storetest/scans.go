package storetest

import (
	"fmt"
	"time"

	"github.com/stretchr/testify/require"

	"topicgate/topicstore"
)

var scanTests = []subtest{
	{"Bounds", testScanBounds},
	{"MinWrittenAt", testScanMinWrittenAt},
	{"Errors", testScanErrors},
	{"WrittenAt", testScanWrittenAt},
}

// fourCommits writes offsets 0-9 of topic "t" in commits of 3, 1, 4 and 2
// messages, one second apart; the body of each is its offset.
func fourCommits(e *env) {
	e.create("t", 1)
	n := 0
	for _, k := range []int{3, 1, 4, 2} {
		var msgs []topicstore.Message
		for j := 0; j < k; j++ {
			msgs = append(msgs, topicstore.Message{Partition: 0, Body: []byte(fmt.Sprint(n))})
			n++
		}
		e.commit("t", msgs...)
		e.clk.Advance(time.Second)
	}
}

func (e *env) offsets(r topicstore.ScanRange) []int64 {
	e.t.Helper()
	out := []int64{}
	require.NoError(e.t, e.s.Scan(ctx, "t", r, func(m *topicstore.Message) bool {
		require.Equal(e.t, fmt.Sprint(m.Offset), string(m.Body))
		require.Equal(e.t, r.Partition, m.Partition)
		out = append(out, m.Offset)
		return true
	}))
	return out
}

func testScanBounds(e *env) {
	t := e.t
	fourCommits(e)
	require.Equal(t, []int64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, e.offsets(topicstore.ScanRange{Start: -5, End: -1}), "clamped to the start")
	require.Equal(t, []int64{5, 6, 7, 8}, e.offsets(topicstore.ScanRange{Start: 5, End: 9}), "End is exclusive")
	require.Equal(t, []int64{3}, e.offsets(topicstore.ScanRange{Start: 3, End: 4}))
	require.Equal(t, []int64{8, 9}, e.offsets(topicstore.ScanRange{Start: 8, End: 100}), "clamped to the visible end")
	require.Equal(t, []int64{}, e.offsets(topicstore.ScanRange{Start: 10, End: -1}))
	require.Equal(t, []int64{}, e.offsets(topicstore.ScanRange{Start: 7, End: 7}))
	require.Equal(t, []int64{}, e.offsets(topicstore.ScanRange{Start: 7, End: 2}))
	// fn returning false stops the scan.
	cnt := 0
	require.NoError(t, e.s.Scan(ctx, "t", topicstore.ScanRange{Start: 2, End: -1}, func(m *topicstore.Message) bool { cnt++; return cnt < 2 }))
	require.Equal(t, 2, cnt)
	p := e.info("t").Partitions[0]
	require.Equal(t, []int64{0, 10, 10}, []int64{p.StartOffset, p.EndOffset, p.Messages})
}

// testScanMinWrittenAt: every message written at or after MinWrittenAt
// is returned, and none written before it.
func testScanMinWrittenAt(e *env) {
	t := e.t
	fourCommits(e)
	require.Equal(t, []int64{4, 5, 6, 7, 8, 9}, e.offsets(topicstore.ScanRange{End: -1, MinWrittenAt: Start.Add(2 * time.Second)}))
	require.Equal(t, []int64{5, 6, 7}, e.offsets(topicstore.ScanRange{Start: 5, End: 8, MinWrittenAt: Start.Add(time.Second)}))
	require.Equal(t, []int64{}, e.offsets(topicstore.ScanRange{End: -1, MinWrittenAt: Start.Add(time.Hour)}))
	for _, m := range e.scanMsgs("t", topicstore.ScanRange{End: -1, MinWrittenAt: Start.Add(3 * time.Second)}) {
		require.True(t, m.WrittenAt.Equal(Start.Add(3*time.Second)), "offset %d written at %v", m.Offset, m.WrittenAt)
	}
}

func testScanErrors(e *env) {
	t := e.t
	e.create("t", 2)
	none := func(*topicstore.Message) bool { t.Fatal("no message expected"); return false }
	require.ErrorIs(t, e.s.Scan(ctx, "t", topicstore.ScanRange{Partition: 2, End: -1}, none), topicstore.ErrPartitionNotFound)
	require.ErrorIs(t, e.s.Scan(ctx, "t", topicstore.ScanRange{Partition: -1, End: -1}, none), topicstore.ErrPartitionNotFound)
	require.ErrorIs(t, e.s.Scan(ctx, "nope", part(0), none), topicstore.ErrTopicNotFound)
	require.NoError(t, e.s.Scan(ctx, "t", part(1), none), "an empty partition calls fn never")
}

// testScanWrittenAt: topicstore.WrittenAter (the cluster store answers
// it from its index, the embedded store by reading) tells what Scan's
// first message from that offset says; nothing past the end.
func testScanWrittenAt(e *env) {
	t := e.t
	wa, ok := e.s.(topicstore.WrittenAter)
	require.True(t, ok, "the store (%T) tells when a message was written (topicstore.WrittenAter)", e.s)
	fourCommits(e)
	check := func() {
		for off := int64(0); off < 11; off++ {
			want, wantOK := time.Time{}, false
			for _, m := range e.scanMsgs("t", topicstore.ScanRange{Start: off, End: -1}) {
				want, wantOK = m.WrittenAt, true
				break
			}
			got, gotOK := wa.WrittenAt("t", 0, off)
			require.Equal(t, wantOK, gotOK, "offset %d", off)
			require.True(t, want.Equal(got), "offset %d: %v, Scan says %v", off, got, want)
		}
	}
	check()
	_, ok = wa.WrittenAt("t", 1, 0)
	require.False(t, ok, "a partition the topic lacks")
	_, ok = wa.WrittenAt("nope", 0, 0)
	require.False(t, ok, "a topic that does not exist")
}
