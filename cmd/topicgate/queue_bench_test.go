package main

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
)

// BenchmarkQueueCycle measures the bench's queue workload through the front
// door: 16 workers of the shared consumer w, each acquiring up to 10
// messages and acknowledging them with one DELETE per partition, the
// DELETEs pipelined in one round trip. One op is one message acknowledged;
// it reports messages/s. Use it with -cpuprofile, -blockprofile and
// -mutexprofile to see where a cycle's time goes.
func BenchmarkQueueCycle(b *testing.B) {
	a := startTestServer(b)
	ctx := context.Background()
	setup := connect(b, a)
	exec(b, setup, "CREATE TOPIC bench_queue (CONSUMER w WITH (type = 'shared')) WITH (min_active_partitions = 4)")
	payload := make([]byte, 100)
	_, err := setup.CopyFrom(ctx, pgx.Identifier{"bench_queue"}, []string{"partition", "data"},
		pgx.CopyFromSlice(b.N, func(i int) ([]any, error) { return []any{int64(i % 4), payload}, nil }))
	if err != nil {
		b.Fatal(err)
	}
	const workers = 16
	var acked atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	for k := 0; k < workers; k++ {
		c := connect(b, a)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for acked.Load() < int64(b.N) {
				n, err := queueCycle(ctx, c)
				if err != nil {
					b.Error(err)
					return
				}
				acked.Add(int64(n))
			}
		}()
	}
	wg.Wait()
	b.ReportMetric(float64(acked.Load())/b.Elapsed().Seconds(), "msgs/s")
}

// queueCycle acquires up to 10 messages of w and acknowledges them; it
// returns how many it acknowledged.
func queueCycle(ctx context.Context, c *pgx.Conn) (int, error) {
	rows, err := c.Query(ctx, "SELECT partition, offset, data FROM bench_queue WITH (CONSUMER = w) LIMIT 10")
	if err != nil {
		return 0, err
	}
	offsets := map[int64][]int64{}
	var parts []int64
	n := 0
	for rows.Next() {
		var p, o int64
		var d []byte
		if err := rows.Scan(&p, &o, &d); err != nil {
			return 0, err
		}
		if _, ok := offsets[p]; !ok {
			parts = append(parts, p)
		}
		offsets[p] = append(offsets[p], o)
		n++
	}
	if err := rows.Err(); err != nil || n == 0 {
		return 0, err
	}
	batch := &pgx.Batch{}
	for _, p := range parts {
		batch.Queue("DELETE FROM bench_queue WITH (CONSUMER = w) WHERE partition = $1 AND offset = ANY($2)", p, offsets[p])
	}
	return n, c.SendBatch(ctx, batch).Close()
}
