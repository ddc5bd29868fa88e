package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestCrashConsumerPositions: readers consume as one streaming consumer in
// autocommit (each read commits its position, synced, once its rows were
// flushed to the reader) while the server is killed with SIGKILL and
// restarted. After every restart nothing is lost: every offset below a
// partition's committed offset was given to a reader; positions never move
// backwards; and a message is given twice only across a kill, when its
// read's commit did not make it (at least once, never at most once).
func TestCrashConsumerPositions(t *testing.T) {
	cycles := 3
	if testing.Short() {
		cycles = 1
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 7))
	s := newCrashServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s.start()
	c := s.connect(ctx)
	if _, err := c.Exec(ctx, "CREATE TOPIC t (CONSUMER c) WITH (min_active_partitions = 4)"); err != nil {
		t.Fatal(err)
	}
	const total = 4000
	if _, err := c.CopyFrom(ctx, pgx.Identifier{"t"}, []string{"partition", "data"},
		pgx.CopyFromSlice(total, func(i int) ([]any, error) { return []any{int64(i % 4), []byte(fmt.Sprint(i))}, nil })); err != nil {
		t.Fatal(err)
	}
	c.Close(ctx)

	var mu sync.Mutex
	delivered := map[[2]int64]int{} // message -> the cycle it was first given in, + 1
	prev := map[int64]int64{}       // committed offsets after the previous restart
	for cycle := 0; cycle < cycles; cycle++ {
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() { // a producer keeps the readers busy until the kill
			defer wg.Done()
			pc, err := pgx.Connect(ctx, s.dsn())
			if err != nil {
				return
			}
			defer pc.Close(context.Background())
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := pc.Exec(ctx, "INSERT INTO t (data) VALUES ('a'), ('b'), ('c'), ('d'), ('e'), ('f'), ('g'), ('h')"); err != nil {
					return
				}
			}
		}()
		for r := 0; r < 4; r++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rc, err := pgx.Connect(ctx, s.dsn())
				if err != nil {
					return
				}
				defer rc.Close(context.Background())
				for {
					select {
					case <-stop:
						return
					default:
					}
					// Rows that arrived count as given even when the server
					// died before the statement completed: the reader saw them.
					ps, err := readBatch(ctx, rc, "SELECT partition, offset FROM t WITH (CONSUMER = c, WAIT = '50ms') LIMIT 50")
					mu.Lock()
					for _, p := range ps {
						k := [2]int64{p.part, p.off}
						if first := delivered[k]; first > 0 && (first-1 == cycle || p.off < prev[p.part]) {
							t.Errorf("cycle %d: message %v delivered twice (first in cycle %d, committed %d at this cycle's start)", cycle, k, first-1, prev[p.part])
						}
						if delivered[k] == 0 {
							delivered[k] = cycle + 1
						}
					}
					mu.Unlock()
					if err != nil {
						return // the server died under us
					}
				}
			}()
		}
		time.Sleep(time.Duration(200+rng.IntN(400)) * time.Millisecond) // load before the kill
		s.kill()
		close(stop)
		wg.Wait()
		s.start()
		vc := s.connect(ctx)
		rows, err := vc.Query(ctx, "SELECT partition, committed_offset FROM sys.consumers WHERE topic = 't' AND consumer = 'c'")
		if err != nil {
			t.Fatal(err)
		}
		now := map[int64]int64{}
		for rows.Next() {
			var p, off int64
			if err := rows.Scan(&p, &off); err != nil {
				t.Fatal(err)
			}
			now[p] = off
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		vc.Close(ctx)
		mu.Lock()
		for p := int64(0); p < 4; p++ {
			for off := int64(0); off < now[p]; off++ {
				if delivered[[2]int64{p, off}] == 0 {
					t.Errorf("cycle %d partition %d: committed %d after restart, but offset %d was never given to a reader (lost)", cycle, p, now[p], off)
					break
				}
			}
			if now[p] < prev[p] {
				t.Errorf("cycle %d partition %d: position moved backwards from %d to %d", cycle, p, prev[p], now[p])
			}
		}
		t.Logf("cycle %d: committed %v, delivered %d messages so far", cycle, now, len(delivered))
		mu.Unlock()
		prev = now
	}
	if len(delivered) == 0 {
		t.Fatal("readers got nothing: the test proved nothing")
	}
}
