package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// TestWriteSpeedLimit writes through the front door with a real, small load:
// a topic limited to 16 KiB/s with a 16 KiB burst gets 64 KiB in 1 KiB
// INSERTs from one producer, which takes at least the 3 s the bucket needs;
// meanwhile a default topic, another partition of the limited topic and a
// COPY into a third partition are not held back by it (the COPY only by its
// own partition's bucket). sys.partitions and /metrics show the throttled
// time, and a statement_timeout cuts a wait short with a WARNING while the
// message stays written.
func TestWriteSpeedLimit(t *testing.T) {
	a := startTestServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	setup := connect(t, a)
	exec(t, setup, `CREATE TOPIC slow WITH (min_active_partitions = 3,
		partition_write_speed_bytes_per_second = 16384, partition_write_burst_bytes = 16384)`)
	exec(t, setup, "CREATE TOPIC quick")
	kib := bytes.Repeat([]byte("x"), 1024)

	// insertN writes n 1 KiB messages to topic (partition >= 0: explicit),
	// one autocommit INSERT each, and returns the wall-clock time taken.
	insertN := func(c *pgx.Conn, topic string, part, n int) time.Duration {
		start := time.Now()
		for i := range n {
			var err error
			if part >= 0 {
				_, err = c.Exec(ctx, "INSERT INTO "+topic+" (partition, producer_id, seqno, data) VALUES ($1, $2, $3, $4)",
					part, fmt.Sprint(topic, part), i+1, kib)
			} else {
				_, err = c.Exec(ctx, "INSERT INTO "+topic+" (data) VALUES ($1)", kib)
			}
			if err != nil {
				t.Error(err)
				return 0
			}
		}
		return time.Since(start)
	}
	var (
		wg                            sync.WaitGroup
		slowTook, quickTook, p1Took   time.Duration
		copyTook                      time.Duration
		cSlow, cQuick, cP1, cCopy     = connect(t, a), connect(t, a), connect(t, a), connect(t, a)
		copyRows                      = 24
		copied                        int64
		copyErr                       error
		slowDone                      = make(chan struct{})
		quickDoneBeforeSlow, p1Before bool
	)
	wg.Add(4)
	go func() { defer wg.Done(); defer close(slowDone); slowTook = insertN(cSlow, "slow", 0, 64) }()
	go func() {
		defer wg.Done()
		quickTook = insertN(cQuick, "quick", -1, 64)
		select {
		case <-slowDone:
		default:
			quickDoneBeforeSlow = true
		}
	}()
	go func() {
		defer wg.Done()
		p1Took = insertN(cP1, "slow", 1, 8) // within partition 1's burst
		select {
		case <-slowDone:
		default:
			p1Before = true
		}
	}()
	go func() {
		defer wg.Done()
		start := time.Now()
		copied, copyErr = cCopy.CopyFrom(ctx, pgx.Identifier{"slow"}, []string{"partition", "data"},
			pgx.CopyFromSlice(copyRows, func(int) ([]any, error) { return []any{int64(2), kib}, nil }))
		copyTook = time.Since(start)
	}()
	wg.Wait()
	require.NoError(t, copyErr)
	require.Equal(t, int64(copyRows), copied)
	t.Logf("slow partition 0: 64 KiB in %v; quick: %v; slow partition 1: %v; COPY of 24 KiB into partition 2: %v",
		slowTook, quickTook, p1Took, copyTook)
	// (64 × ~1040 stored bytes − 16384 burst) / 16384 B/s ≈ 3.06 s.
	require.GreaterOrEqual(t, slowTook, 2950*time.Millisecond, "the limit holds the producer to 16 KiB/s")
	require.Less(t, slowTook, 6*time.Second, "no more than the limit asks")
	require.True(t, quickDoneBeforeSlow, "a default topic is not throttled (took %v)", quickTook)
	require.True(t, p1Before, "another partition's writer is not held back (took %v)", p1Took)
	// (24 × ~1040 − 16384) / 16384 ≈ 0.52 s, waited at the COPY's commit.
	require.GreaterOrEqual(t, copyTook, 450*time.Millisecond, "COPY is throttled by its partition")

	throttled := map[string]float64{}
	rows, err := setup.Query(ctx, "SELECT topic, partition, throttled_seconds FROM sys.partitions WHERE topic IN ('slow', 'quick')")
	require.NoError(t, err)
	for rows.Next() {
		var topic string
		var part int64
		var secs float64
		require.NoError(t, rows.Scan(&topic, &part, &secs))
		throttled[fmt.Sprint(topic, part)] = secs
	}
	require.NoError(t, rows.Err())
	t.Logf("throttled_seconds: %v", throttled)
	// Summed over writes: each of the 48 writes past the burst waits about
	// 1/16 s, less what refilled during its round trip.
	require.Greater(t, throttled["slow0"], 1.5)
	require.LessOrEqual(t, throttled["slow0"], slowTook.Seconds())
	require.Zero(t, throttled["slow1"])
	require.Greater(t, throttled["slow2"], 0.45)
	require.Zero(t, throttled["quick0"])
	var buf bytes.Buffer
	a.engine.WriteMetrics(&buf)
	require.Contains(t, buf.String(), "# TYPE topicgate_topic_throttled_seconds_total counter")
	require.Contains(t, buf.String(), `topicgate_topic_throttled_seconds_total{topic="quick"} 0`+"\n")
	var total float64
	_, err = fmt.Sscanf(buf.String()[strings.Index(buf.String(), `topicgate_topic_throttled_seconds_total{topic="slow"}`):],
		`topicgate_topic_throttled_seconds_total{topic="slow"} %g`, &total)
	require.NoError(t, err)
	require.InDelta(t, throttled["slow0"]+throttled["slow2"], total, 1e-6, "the topic's counter sums its partitions")

	// A 64 KiB message owes 3 s on partition 1: statement_timeout ends the
	// wait, the INSERT succeeds with a WARNING and the message is there.
	c, notices := connectNotices(t, a)
	exec(t, c, "SET statement_timeout = 100")
	start := time.Now()
	tag := exec(t, c, "INSERT INTO slow (partition, data) VALUES (1, $1)", bytes.Repeat(kib, 64))
	took := time.Since(start)
	require.Equal(t, "INSERT 0 1", tag.String())
	require.Less(t, took, 2*time.Second, "the wait ended with the statement")
	got := notices.take()
	require.Len(t, got, 1)
	require.True(t, strings.HasPrefix(got[0], `canceling wait for the write-speed limit of topic "slow"`), got[0])
	var end int64
	require.NoError(t, setup.QueryRow(ctx, "SELECT end_offset FROM sys.partitions WHERE topic = 'slow' AND partition = 1").Scan(&end))
	require.Equal(t, int64(9), end)

	// COMMIT of a transaction block waits too: 8 KiB against a 1 KiB burst
	// at 16 KiB/s owes about 0.44 s.
	exec(t, setup, `CREATE TOPIC txslow WITH (partition_write_speed_bytes_per_second = 16384, partition_write_burst_bytes = 1024)`)
	exec(t, setup, "BEGIN")
	exec(t, setup, "INSERT INTO txslow (data) VALUES ($1)", bytes.Repeat(kib, 8))
	start = time.Now()
	exec(t, setup, "COMMIT")
	took = time.Since(start)
	t.Logf("COMMIT of 8 KiB: %v", took)
	require.GreaterOrEqual(t, took, 400*time.Millisecond, "COMMIT is throttled")
}
