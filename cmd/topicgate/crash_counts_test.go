package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// countsLedger is what the workers of TestCrashSharedDeliveryCounts saw,
// per consumer: the highest delivery_count each message was handed out
// with so far.
type countsLedger struct {
	mu       sync.Mutex
	seen     map[string]map[pos]int64
	problems []string
}

// got checks that every delivery is a later attempt than any seen before
// (across kills), and within max attempts (0: no limit).
func (l *countsLedger) got(cycle int, consumer string, max int64, ms []shMsg) {
	l.mu.Lock()
	defer l.mu.Unlock()
	seen := l.seen[consumer]
	for _, m := range ms {
		p := m.pos()
		if prev, ok := seen[p]; ok && m.dc <= prev {
			l.problems = append(l.problems, fmt.Sprintf("cycle %d: %s: message %v handed out with delivery_count %d, after %d", cycle, consumer, p, m.dc, prev))
		}
		if max > 0 && m.dc > max {
			l.problems = append(l.problems, fmt.Sprintf("cycle %d: %s: message %v handed out with delivery_count %d, max_processing_attempts is %d", cycle, consumer, p, m.dc, max))
		}
		seen[p] = m.dc
	}
}

// TestCrashSharedDeliveryCounts: workers of two shared consumers acquire
// messages (those of "w", max_processing_attempts = 3 with the move
// policy, release half of what they get; those of "n", no limit, keep
// their locks) while the server is SIGKILLed and restarted. Delivery
// counts never go back: a message delivered k times is on attempt k+1 or
// later after a crash; no message of "w" is handed out a fourth time; and
// in the end every message of "w" was either moved to the dead-letter
// topic once, with dlq_attempts 3, or is still in the queue with fewer
// deliveries.
func TestCrashSharedDeliveryCounts(t *testing.T) {
	cycles := 3
	if testing.Short() {
		cycles = 2
	}
	const parts, perPart = 4, 300
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d, %d kill/restart cycles", seed, cycles)
	rng := rand.New(rand.NewPCG(seed, 0xc0a7))

	s := newCrashServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	s.start()
	c := s.connect(ctx)
	for _, q := range []string{
		"CREATE TOPIC dlq",
		`CREATE TOPIC t (CONSUMER w WITH (type = 'shared', default_processing_timeout = Interval('PT5M'),
			max_processing_attempts = 3, dead_letter_policy = 'move', dead_letter_queue = 'dlq'),
			CONSUMER n WITH (type = 'shared', default_processing_timeout = Interval('PT5M'))) WITH (min_active_partitions = 4)`,
	} {
		if _, err := c.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.CopyFrom(ctx, pgx.Identifier{"t"}, []string{"partition", "data"},
		pgx.CopyFromSlice(parts*perPart, func(i int) ([]any, error) {
			return []any{int64(i % parts), []byte(fmt.Sprintf("%d/%d", i%parts, i/parts))}, nil
		})); err != nil {
		t.Fatal(err)
	}
	c.Close(ctx)

	l := &countsLedger{seen: map[string]map[pos]int64{"w": {}, "n": {}}}
	for cycle := 1; cycle <= cycles; cycle++ {
		load := time.Duration(200+rng.IntN(301)) * time.Millisecond
		crashCountsLoad(t, s, l, cycle, load)
		for _, p := range l.problems {
			t.Error(p)
		}
		if t.Failed() {
			return
		}
		l.mu.Lock()
		t.Logf("cycle %d: SIGKILL after %v of load; %d messages of w and %d of n handed out so far", cycle, load, len(l.seen["w"]), len(l.seen["n"]))
		l.mu.Unlock()
		s.start()
	}

	// After the last restart: drain both consumers.
	before := map[pos]int64{} // w's counts as of the last kill
	for p, n := range l.seen["w"] {
		before[p] = n
	}
	dc := s.connect(ctx)
	defer dc.Close(ctx)
	drained := map[string]map[pos]int64{"w": {}, "n": {}}
	for _, cons := range []string{"w", "n"} {
		for {
			ms, err := shAcquire(ctx, dc, "t", "CONSUMER = "+cons, 1000)
			if err != nil {
				t.Fatalf("drain %s: %v", cons, err)
			}
			if len(ms) == 0 {
				break
			}
			max := int64(0)
			if cons == "w" {
				max = 3
			}
			l.got(cycles+1, cons, max, ms)
			for _, m := range ms {
				drained[cons][m.pos()] = m.dc
			}
			if _, err := shAckBatch(ctx, dc, "t", cons, ms); err != nil {
				t.Fatalf("drain %s: ack: %v", cons, err)
			}
		}
	}
	for _, p := range l.problems {
		t.Error(p)
	}
	if n := len(drained["n"]); n != parts*perPart {
		t.Errorf("n: drained %d messages, want all %d (nothing was acknowledged before)", n, parts*perPart)
	}
	rows, err := dc.Query(ctx, "SELECT (attrs->>'dlq_source_partition')::int8, (attrs->>'dlq_source_offset')::int8, (attrs->>'dlq_attempts')::int8 FROM dlq")
	if err != nil {
		t.Fatal(err)
	}
	moved := map[pos]bool{}
	for rows.Next() {
		var p pos
		var attempts int64
		if err := rows.Scan(&p.part, &p.off, &attempts); err != nil {
			t.Fatal(err)
		}
		if moved[p] {
			t.Errorf("message %v moved to the dead-letter topic twice", p)
		}
		moved[p] = true
		if attempts != 3 {
			t.Errorf("message %v moved with dlq_attempts %d, want 3", p, attempts)
		}
		if _, ok := drained["w"][p]; ok {
			t.Errorf("message %v was moved to the dead-letter topic and handed out after the restart", p)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	var third int
	for p, dc := range before {
		if dc == 3 {
			third++
			if !moved[p] {
				t.Errorf("message %v was delivered 3 times and is not in the dead-letter topic", p)
			}
		}
	}
	if got := len(moved) + len(drained["w"]); got != parts*perPart {
		t.Errorf("w: %d moved + %d drained = %d, want %d", len(moved), len(drained["w"]), got, parts*perPart)
	}
	t.Logf("w: %d messages seen on their third delivery, %d moved to the dead-letter topic, %d drained after the last restart", third, len(moved), len(drained["w"]))
}

// crashCountsLoad runs 4 workers (0, 1 on "w", releasing every other
// message they get; 2, 3 on "n", keeping their locks) until the server is
// SIGKILLed after load.
func crashCountsLoad(t *testing.T, s *crashServer, l *countsLedger, cycle int, load time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var killed atomic.Bool
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		c := s.connect(ctx)
		wg.Add(1)
		go func(w int, c *pgx.Conn) {
			defer wg.Done()
			defer c.Close(context.Background())
			cons, max := "w", int64(3)
			if w >= 2 {
				cons, max = "n", 0
			}
			for !killed.Load() {
				ms, err := shAcquire(ctx, c, "t", "CONSUMER = "+cons+", WAIT = '50ms'", 10)
				if err != nil {
					var pe *pgconn.PgError
					if !killed.Load() || errors.As(err, &pe) {
						l.mu.Lock()
						l.problems = append(l.problems, fmt.Sprintf("cycle %d worker %d: acquire: %v", cycle, w, err))
						l.mu.Unlock()
					}
					return
				}
				l.got(cycle, cons, max, ms)
				if cons != "w" {
					continue
				}
				for i, m := range ms {
					if i%2 == 1 {
						continue
					}
					if _, err := c.Exec(ctx, "UPDATE t WITH (CONSUMER = w) SET locked_until = NULL WHERE partition = $1 AND offset = $2", m.part, m.off); err != nil {
						return // killed (an unexpected error shows in the counts)
					}
				}
			}
		}(w, c)
	}
	time.Sleep(load) // the load phase: the workers run meanwhile
	killed.Store(true)
	s.kill()
	wg.Wait()
}
