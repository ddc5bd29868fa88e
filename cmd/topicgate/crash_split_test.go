package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestCrashDuringSplits kills a real server process with SIGKILL while a
// dedup load makes an auto-partitioned topic split (a 1 KiB/s partition
// speed and a one-second window, so splits come every second of load),
// restarts it and checks that the layout is whole (every inactive
// partition has its two children, which name it as parent), that every
// acknowledged message is there exactly once and in order along its
// producer's partition chain, and that the in-flight batches resent after
// the restart are deduplicated or written, never both.
func TestCrashDuringSplits(t *testing.T) {
	cycles := 2
	if testing.Short() {
		cycles = 1
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0x5971))
	s := newCrashServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s.start()
	c := s.connect(ctx)
	if _, err := c.Exec(ctx, `CREATE TOPIC t WITH (min_active_partitions = 1, max_active_partitions = 16,
		auto_partitioning_strategy = 'scale_up', partition_write_speed_bytes_per_second = 1024,
		auto_partitioning_stabilization_window = Interval('PT1S'))`); err != nil {
		t.Fatal(err)
	}
	c.Close(ctx)
	producers := make([]*crashProducer, 8)
	for k := range producers {
		producers[k] = &crashProducer{id: fmt.Sprintf("w%d", k), partition: -1}
	}
	for cycle := 1; cycle <= cycles; cycle++ {
		load := time.Duration(1200+rng.IntN(1300)) * time.Millisecond
		stmts := crashLoadAndKill(t, s, producers, rng.Uint64(), load)
		if t.Failed() {
			return
		}
		s.start()
		c := s.connect(ctx)
		parts := crashCheckLayout(t, c)
		t.Logf("cycle %d: %v of load, %d acknowledged INSERTs, %d partitions after restart", cycle, load, stmts, parts)
		acked := map[string]int64{}
		for _, p := range producers {
			acked[p.id] = p.acked
		}
		checkProducerChains(t, c, "t", acked)
		crashResendInflight(t, c, producers)
		for _, p := range producers {
			acked[p.id] = p.acked
		}
		checkProducerChains(t, c, "t", acked)
		c.Close(ctx)
		if t.Failed() {
			return
		}
	}
}

// crashCheckLayout checks that sys.partitions describes a whole split
// tree and returns the number of partitions.
func crashCheckLayout(t *testing.T, c *pgx.Conn) int {
	t.Helper()
	rows, err := c.Query(context.Background(), "SELECT partition, active, parent, children FROM sys.partitions WHERE topic = 't'")
	if err != nil {
		t.Fatal(err)
	}
	type part struct {
		active   bool
		parent   *int64
		children []int64
	}
	parts := map[int64]part{}
	for rows.Next() {
		var id int64
		var p part
		if err := rows.Scan(&id, &p.active, &p.parent, &p.children); err != nil {
			t.Fatal(err)
		}
		parts[id] = p
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	for id, p := range parts {
		switch {
		case p.active && len(p.children) > 0:
			t.Errorf("active partition %d has children %v", id, p.children)
		case !p.active && len(p.children) != 2:
			t.Errorf("inactive partition %d has children %v, want two", id, p.children)
		}
		for _, ch := range p.children {
			if q, ok := parts[ch]; !ok || q.parent == nil || *q.parent != id {
				t.Errorf("partition %d's child %d does not name it as parent", id, ch)
			}
		}
	}
	return len(parts)
}
