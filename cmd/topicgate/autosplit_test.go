package main

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// splitLayout is a topic's partitions as sys.partitions reports them.
type splitLayout struct {
	parent map[int64]int64 // child -> parent
	active map[int64]bool
}

func readSplitLayout(t testing.TB, c *pgx.Conn, topic string) splitLayout {
	t.Helper()
	l := splitLayout{parent: map[int64]int64{}, active: map[int64]bool{}}
	rows, err := c.Query(context.Background(), "SELECT partition, active, parent FROM sys.partitions WHERE topic = $1", topic)
	require.NoError(t, err)
	for rows.Next() {
		var p int64
		var active bool
		var parent *int64
		require.NoError(t, rows.Scan(&p, &active, &parent))
		l.active[p] = active
		if parent != nil {
			l.parent[p] = *parent
		}
	}
	require.NoError(t, rows.Err())
	return l
}

// descends reports whether partition d descends from (or is) a.
func (l splitLayout) descends(d, a int64) bool {
	for {
		if d == a {
			return true
		}
		p, ok := l.parent[d]
		if !ok {
			return false
		}
		d = p
	}
}

// checkProducerChains checks what a keyed topic holds against what its
// producers were acknowledged: each producer's seqnos 1..n exactly once
// (n at least acked[p]), and in order along a chain of partitions where
// each next one descends from the one before (a producer follows its key
// into a child when its partition splits, never back or sideways).
func checkProducerChains(t testing.TB, c *pgx.Conn, topic string, acked map[string]int64) {
	t.Helper()
	l := readSplitLayout(t, c, topic)
	rows, err := c.Query(context.Background(), "SELECT partition, offset, producer_id, seqno FROM "+topic+" ORDER BY partition, offset")
	require.NoError(t, err)
	type at struct{ part, off int64 }
	seqs := map[string]map[int64]at{}
	for rows.Next() {
		var part, off, seq int64
		var prod string
		require.NoError(t, rows.Scan(&part, &off, &prod, &seq))
		if seqs[prod] == nil {
			seqs[prod] = map[int64]at{}
		}
		if prev, dup := seqs[prod][seq]; dup {
			t.Errorf("producer %s seqno %d twice: partition %d offset %d and partition %d offset %d", prod, seq, prev.part, prev.off, part, off)
		}
		seqs[prod][seq] = at{part, off}
	}
	require.NoError(t, rows.Err())
	for prod, n := range acked {
		got := seqs[prod]
		if int64(len(got)) < n {
			t.Errorf("producer %s: %d messages stored, %d acknowledged", prod, len(got), n)
		}
		var prev at
		for s := int64(1); s <= int64(len(got)); s++ {
			cur, ok := got[s]
			if !ok {
				t.Errorf("producer %s: seqno %d missing (stored %d)", prod, s, len(got))
				break
			}
			if s > 1 {
				switch {
				case cur.part == prev.part && cur.off <= prev.off:
					t.Errorf("producer %s: seqno %d at offset %d before seqno %d at %d in partition %d", prod, s, cur.off, s-1, prev.off, cur.part)
				case cur.part != prev.part && !l.descends(cur.part, prev.part):
					t.Errorf("producer %s: seqno %d in partition %d, which does not descend from partition %d of seqno %d", prod, s, cur.part, prev.part, s-1)
				}
			}
			prev = cur
		}
	}
}

// TestAutoSplitUnderLoad: a 'scale_up' topic with a small partition speed
// (16 KiB/s) and a one-second window, written by several producers faster
// than that, splits within seconds, up to max_active_partitions; every
// producer's messages are stored exactly once and in order along its
// partition chain, and a retry of an early seqno is still a duplicate.
func TestAutoSplitUnderLoad(t *testing.T) {
	a := startTestServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := connect(t, a)
	exec(t, c, `CREATE TOPIC hot WITH (min_active_partitions = 1, max_active_partitions = 4,
		auto_partitioning_strategy = 'scale_up', partition_write_speed_bytes_per_second = 16384,
		auto_partitioning_stabilization_window = Interval('PT1S'))`)
	const producers = 6
	payload := make([]byte, 1024)
	var stop atomic.Bool
	acked := make([]int64, producers)
	var wg sync.WaitGroup
	for k := range producers {
		pc := connect(t, a)
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := fmt.Sprintf("p%d", k)
			for seq := int64(1); !stop.Load(); seq++ {
				if _, err := pc.Exec(ctx, "INSERT INTO hot (producer_id, seqno, data) VALUES ($1, $2, $3)", id, seq, payload); err != nil {
					t.Errorf("%s seqno %d: %v", id, seq, err)
					return
				}
				acked[k] = seq
			}
		}()
	}
	// Splits happen as the load runs: wait until the topic has its
	// max_active_partitions (three splits), then stop the writers.
	start := time.Now()
	var active int64
	for time.Since(start) < 20*time.Second {
		require.NoError(t, c.QueryRow(ctx, "SELECT active_partitions FROM sys.topics WHERE topic = 'hot'").Scan(&active))
		if active == 4 {
			break
		}
		select { // a bounded wait for the next check, not a synchronisation
		case <-ctx.Done():
		case <-time.After(50 * time.Millisecond):
		}
	}
	elapsed := time.Since(start)
	stop.Store(true)
	wg.Wait()
	require.Equal(t, int64(4), active, "active partitions after %v of load", elapsed)
	t.Logf("4 active partitions after %v of load", elapsed)

	want := map[string]int64{}
	for k, n := range acked {
		want[fmt.Sprintf("p%d", k)] = n
	}
	checkProducerChains(t, c, "hot", want)
	l := readSplitLayout(t, c, "hot")
	require.Len(t, l.active, 7, "1 + 3 splits x 2 children")
	// A retry of each producer's first message is still skipped.
	for k := range producers {
		tag := exec(t, c, "INSERT INTO hot (producer_id, seqno, data) VALUES ($1, 1, 'again')", fmt.Sprintf("p%d", k))
		require.Equal(t, "INSERT 0 0", tag.String())
	}
}
