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

// msgID is one producer's message as a consumer saw it.
type msgID struct {
	producer string
	seqno    int64
}

// readProducers reads as a consumer and returns (producer, seqno) in the
// order the rows came.
func readProducers(ctx context.Context, c *pgx.Conn, sql string) ([]msgID, error) {
	rows, err := c.Query(ctx, sql)
	if err != nil {
		return nil, err
	}
	var out []msgID
	for rows.Next() {
		var m msgID
		if err := rows.Scan(&m.producer, &m.seqno); err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// TestSplitReadInOrder: producers write before, during and after two
// splits (of the first partition, then of one of its children). One
// consumer reads with a single session, another with two sessions, both
// while the producers write: every message is read exactly once, and per
// producer in seqno order (per session, for the two-session consumer:
// children go to a session only after the parent is committed to its end).
func TestSplitReadInOrder(t *testing.T) {
	a := startTestServer(t)
	ctx := context.Background()
	setup := connect(t, a)
	exec(t, setup, "CREATE TOPIC sp (CONSUMER one, CONSUMER two) WITH (max_active_partitions = 8, auto_partitioning_strategy = 'scale_up')")
	const producers, perProducer = 4, 300
	const total = producers * perProducer
	var produced atomic.Int64
	var pwg sync.WaitGroup
	for p := 0; p < producers; p++ {
		pwg.Add(1)
		go func() {
			defer pwg.Done()
			c, err := pgx.Connect(ctx, a.dsn())
			if err != nil {
				t.Error(err)
				return
			}
			defer c.Close(ctx)
			for s := 1; s <= perProducer; s += 10 {
				b := &pgx.Batch{}
				for k := s; k < s+10; k++ {
					b.Queue("INSERT INTO sp (producer_id, seqno, data) VALUES ($1, $2, 'x')", fmt.Sprintf("p%d", p), k)
				}
				if err := c.SendBatch(ctx, b).Close(); err != nil {
					t.Error(err)
					return
				}
				produced.Add(10)
			}
		}()
	}
	const q = "SELECT producer_id, seqno FROM sp WITH (CONSUMER = %s, WAIT = '50ms') LIMIT 37"
	type stream struct {
		mu  sync.Mutex
		got []msgID
	}
	var readersDone sync.WaitGroup
	var countOne, countTwo atomic.Int64
	reader := func(consumer string, n *atomic.Int64, s *stream) {
		defer readersDone.Done()
		c, err := pgx.Connect(ctx, a.dsn())
		if err != nil {
			t.Error(err)
			return
		}
		defer c.Close(ctx)
		deadline := time.Now().Add(60 * time.Second)
		for n.Load() < total && time.Now().Before(deadline) {
			ms, err := readProducers(ctx, c, fmt.Sprintf(q, consumer))
			if err != nil {
				t.Error(err)
				return
			}
			s.mu.Lock()
			s.got = append(s.got, ms...)
			s.mu.Unlock()
			n.Add(int64(len(ms)))
		}
	}
	var one, twoA, twoB stream
	readersDone.Add(3)
	go reader("one", &countOne, &one)
	go reader("two", &countTwo, &twoA)
	go reader("two", &countTwo, &twoB)

	waitFor(t, func() bool { return produced.Load() >= total/4 })
	exec(t, setup, "ALTER TOPIC sp SPLIT PARTITION 0")
	waitFor(t, func() bool { return produced.Load() >= total/2 })
	exec(t, setup, "ALTER TOPIC sp SPLIT PARTITION 1")
	pwg.Wait()
	readersDone.Wait()

	var parts int
	require.NoError(t, setup.QueryRow(ctx, "SELECT count(*) FROM sys.partitions WHERE topic = 'sp'").Scan(&parts))
	require.Equal(t, 5, parts)
	var inChildren int
	require.NoError(t, setup.QueryRow(ctx, "SELECT count(*) FROM sp WHERE partition > 0").Scan(&inChildren))
	require.Greater(t, inChildren, 0, "some messages were written after the split")

	inOrder := func(name string, ms []msgID) {
		last := map[string]int64{}
		for _, m := range ms {
			require.Greater(t, m.seqno, last[m.producer], "%s: producer %s read out of order", name, m.producer)
			last[m.producer] = m.seqno
		}
	}
	exactlyOnce := func(name string, ms []msgID) {
		seen := map[msgID]int{}
		for _, m := range ms {
			seen[m]++
		}
		require.Len(t, seen, total, "%s: every message", name)
		for m, n := range seen {
			require.Equal(t, 1, n, "%s: %v read %d times", name, m, n)
		}
	}
	inOrder("one", one.got)
	exactlyOnce("one", one.got)
	inOrder("two/a", twoA.got)
	inOrder("two/b", twoB.got)
	exactlyOnce("two", append(append([]msgID(nil), twoA.got...), twoB.got...))
}

// TestSplitChildrenFollowParentSession: two read sessions over a topic
// that splits one of their partitions: the children become readable only
// once the session holding the parent committed it to its end, and they go
// to that session (affinity), not to the other one.
func TestSplitChildrenFollowParentSession(t *testing.T) {
	a := startTestServer(t)
	ctx := context.Background()
	ca, cb := connect(t, a), connect(t, a)
	exec(t, ca, "CREATE TOPIC aff (CONSUMER c) WITH (min_active_partitions = 2, max_active_partitions = 4, auto_partitioning_strategy = 'scale_up')")
	exec(t, ca, "INSERT INTO aff (partition, data) VALUES (0, 'a'), (0, 'b'), (1, 'c')")
	ps, err := readBatch(ctx, ca, "SELECT partition, offset FROM aff WITH (CONSUMER = c) LIMIT 1")
	require.NoError(t, err)
	require.Equal(t, []pos{{0, 0}}, ps)
	ps, err = readBatch(ctx, cb, "SELECT partition, offset FROM aff WITH (CONSUMER = c) LIMIT 10")
	require.NoError(t, err)
	require.Equal(t, []pos{{1, 0}}, ps, "B's share is partition 1")

	exec(t, ca, "ALTER TOPIC aff SPLIT PARTITION 0")
	exec(t, ca, "INSERT INTO aff (partition, data) VALUES (2, 'd'), (3, 'e')")
	// B has nothing of its own: the children wait for the parent.
	ps, err = readBatch(ctx, cb, "SELECT partition, offset FROM aff WITH (CONSUMER = c) LIMIT 10")
	require.NoError(t, err)
	require.Empty(t, ps)
	// A finishes the parent, then gets its children.
	ps, err = readBatch(ctx, ca, "SELECT partition, offset FROM aff WITH (CONSUMER = c) LIMIT 10")
	require.NoError(t, err)
	require.Equal(t, []pos{{0, 1}}, ps)
	ps, err = readBatch(ctx, ca, "SELECT partition, offset FROM aff WITH (CONSUMER = c) LIMIT 10")
	require.NoError(t, err)
	require.Equal(t, []pos{{2, 0}, {3, 0}}, ps, "the parent's session gets its children")
	ps, err = readBatch(ctx, cb, "SELECT partition, offset FROM aff WITH (CONSUMER = c) LIMIT 10")
	require.NoError(t, err)
	require.Empty(t, ps)
}
