package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"topicgate/topicstore/jetstream"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// heapSampler records the peak HeapInuse of this process (the server runs
// in-process) until stopped.
type heapSampler struct {
	peak atomic.Uint64
	stop chan struct{}
	wg   sync.WaitGroup
}

func heapInuse() uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

func startHeapSampler() *heapSampler {
	h := &heapSampler{stop: make(chan struct{})}
	h.wg.Go(func() {
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			if v := heapInuse(); v > h.peak.Load() {
				h.peak.Store(v)
			}
			select {
			case <-h.stop:
				return
			case <-tick.C:
			}
		}
	})
	return h
}

func (h *heapSampler) Stop() uint64 {
	close(h.stop)
	h.wg.Wait()
	return h.peak.Load()
}

// rssMB reads the process's resident set size (informational: it includes
// Pebble's off-heap memtables and block cache).
func rssMB() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb >> 10
		}
	}
	return -1
}

// copyMiB sends one COPY of 1 MiB: rows of rowBytes, tagged with group.
func copyMiB(t testing.TB, c *pgx.Conn, topic, group string, payload []byte, rowBytes int) {
	t.Helper()
	n := len(payload) / rowBytes
	got, err := c.CopyFrom(context.Background(), pgx.Identifier{topic}, []string{"message_group_id", "data"},
		pgx.CopyFromSlice(n, func(i int) ([]any, error) {
			return []any{group, payload[i*rowBytes : (i+1)*rowBytes]}, nil
		}))
	require.NoError(t, err)
	require.Equal(t, int64(n), got)
}

// TestBigTransaction commits a transaction of 200 MiB of COPY data (20 MiB
// with -short) with bounded server memory, while another connection
// writes to the same partition, and checks that the transaction's messages
// are contiguous; then rolls back a 50 MiB (5 MiB) one and checks that
// nothing staged is left.
func TestBigTransaction(t *testing.T) {
	mib, rollbackMiB := 200, 50
	if testing.Short() {
		mib, rollbackMiB = 20, 10
	}
	const rowBytes = 128 << 10
	a := startTestServer(t)
	c := connect(t, a)
	ctx := context.Background()
	exec(t, c, "CREATE TOPIC big")
	payload := make([]byte, 1<<20)
	for i := range payload {
		payload[i] = byte(rand.Uint32())
	}

	// 1 MiB transactions: the commit latency to compare with (the best of
	// three: a commit's latency is mostly its fsync).
	smallCommit := time.Hour
	for range 3 {
		exec(t, c, "BEGIN")
		copyMiB(t, c, "big", "small", payload, rowBytes)
		t0 := time.Now()
		exec(t, c, "COMMIT")
		smallCommit = min(smallCommit, time.Since(t0))
	}

	// Another connection keeps writing to the same (only) partition.
	w := connect(t, a)
	var stop atomic.Bool
	var writes atomic.Int64
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 0; !stop.Load(); i++ {
			if _, err := w.Exec(ctx, "INSERT INTO big (message_group_id, data) VALUES ('w', $1)", []byte(fmt.Sprint(i))); err != nil {
				t.Error(err)
				return
			}
			writes.Add(1)
			time.Sleep(2 * time.Millisecond)
		}
	})

	runtime.GC()
	base := heapInuse()
	rss0 := rssMB()
	h := startHeapSampler()
	start := time.Now()
	exec(t, c, "BEGIN")
	for range mib {
		copyMiB(t, c, "big", "tx", payload, rowBytes)
	}
	staged := time.Since(start)
	t0 := time.Now()
	exec(t, c, "COMMIT")
	bigCommit := time.Since(t0)
	peak := h.Stop()
	stop.Store(true)
	wg.Wait()
	growth := int64(peak) - int64(base)
	t.Logf("%d MiB transaction: staged in %v, commit %v (1 MiB transaction: commit %v); heap in use %d MiB -> peak %d MiB (growth %d MiB); RSS %d -> %d MiB",
		mib, staged.Round(time.Millisecond), bigCommit.Round(time.Microsecond), smallCommit.Round(time.Microsecond),
		base>>20, peak>>20, growth>>20, rss0, rssMB())
	require.Less(t, growth, int64(150<<20), "server memory must stay bounded")

	// Count and contiguity: the transaction's messages form one run.
	rows, err := c.Query(ctx, "SELECT offset, message_group_id FROM big WHERE partition = 0")
	require.NoError(t, err)
	var next, first, last, txMsgs, other int64
	first = -1
	for rows.Next() {
		var off int64
		var g string
		require.NoError(t, rows.Scan(&off, &g))
		require.Equal(t, next, off, "contiguous offsets")
		next++
		switch g {
		case "tx":
			if first < 0 {
				first = off
			}
			last = off
			txMsgs++
		case "w":
			other++
		}
	}
	require.NoError(t, rows.Err())
	perMiB := int64(1<<20) / rowBytes
	require.Equal(t, int64(mib)*perMiB, txMsgs)
	require.Equal(t, txMsgs, last-first+1, "no other writer's message inside the transaction")
	require.Equal(t, writes.Load(), other)
	var data []byte
	require.NoError(t, c.QueryRow(ctx, "SELECT data FROM big WHERE partition = 0 AND offset = $1", last).Scan(&data))
	require.Equal(t, payload[(perMiB-1)*rowBytes:], data)

	// Rollback leaves no staged data.
	probe := stagedProbe(t, a)
	st0 := probe()
	exec(t, c, "BEGIN")
	for range rollbackMiB {
		copyMiB(t, c, "big", "rolled back", payload, rowBytes)
	}
	st := probe()
	require.Equal(t, 1, st.open)
	require.Greater(t, st.stored, st0.stored, "spilled to the store")
	exec(t, c, "ROLLBACK")
	st = probe()
	require.Equal(t, 0, st.open)
	require.Equal(t, st0.stored, st.stored, "the rolled back transaction's staged data is gone")
	if a.pebble != nil {
		ps, err := a.pebble.StagedStats()
		require.NoError(t, err)
		require.Equal(t, 1, ps.Referenced, "the committed big transaction")
	}
	var end int64
	require.NoError(t, c.QueryRow(ctx, "SELECT end_offset FROM sys.partitions WHERE topic = 'big'").Scan(&end))
	require.Equal(t, next, end, "the rolled back transaction published nothing")
}

// TestBigCopy sends one autocommit COPY of 150 MiB (15 MiB with -short):
// the server stages it in slices and spills, so its heap stays bounded, and
// the COPY is still all or nothing.
func TestBigCopy(t *testing.T) {
	mib := 150
	if testing.Short() {
		mib = 15
	}
	const rowBytes = 64 << 10
	a := startTestServer(t)
	c := connect(t, a)
	ctx := context.Background()
	exec(t, c, "CREATE TOPIC bigcopy")
	row := make([]byte, rowBytes)
	for i := range row {
		row[i] = byte(rand.Uint32())
	}
	rows := mib << 20 / rowBytes
	runtime.GC()
	base := heapInuse()
	h := startHeapSampler()
	i := 0
	n, err := c.CopyFrom(ctx, pgx.Identifier{"bigcopy"}, []string{"data"}, pgx.CopyFromFunc(func() ([]any, error) {
		if i == rows {
			return nil, nil
		}
		i++
		return []any{row}, nil
	}))
	peak := h.Stop()
	require.NoError(t, err)
	require.Equal(t, int64(rows), n)
	growth := int64(peak-base) >> 20
	t.Logf("one COPY of %d MiB: peak heap growth %d MiB, RSS %d MiB", mib, growth, rssMB())
	require.Less(t, growth, int64(150), "server heap must stay bounded")
	var count, end int64
	require.NoError(t, c.QueryRow(ctx, "SELECT count(*) FROM bigcopy").Scan(&count))
	require.NoError(t, c.QueryRow(ctx, "SELECT end_offset FROM sys.partitions WHERE topic = 'bigcopy'").Scan(&end))
	require.Equal(t, int64(rows), count)
	require.Equal(t, int64(rows), end)

	// A COPY that fails at its last row publishes nothing.
	i = 0
	_, err = c.CopyFrom(ctx, pgx.Identifier{"bigcopy"}, []string{"data", "codec"}, pgx.CopyFromFunc(func() ([]any, error) {
		if i == rows {
			return nil, nil
		}
		i++
		codec := "raw"
		if i == rows {
			codec = "snappy"
		}
		return []any{row, codec}, nil
	}))
	require.Equal(t, "22023", pgCode(err))
	require.NoError(t, c.QueryRow(ctx, "SELECT count(*) FROM bigcopy").Scan(&count))
	require.Equal(t, int64(rows), count)
}

// stagedState is what a store holds of staged transactions: the open
// stagings and the staged records (Pebble keys, JetStream messages).
type stagedState struct {
	open   int
	stored uint64
}

// stagedProbe reads the staged state of a's store, whichever it is.
func stagedProbe(t *testing.T, a *app) func() stagedState {
	return func() stagedState {
		if a.pebble != nil {
			st, err := a.pebble.StagedStats()
			require.NoError(t, err)
			return stagedState{open: st.Open, stored: uint64(st.Keys)}
		}
		js, ok := a.store.(*jetstream.Store)
		require.True(t, ok)
		n, open, err := js.StagedMessages(context.Background())
		require.NoError(t, err)
		return stagedState{open: open, stored: n}
	}
}
