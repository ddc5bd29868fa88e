package main

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
)

// BenchmarkInsertOne measures single-message autocommit INSERTs (prepared,
// binary bytea parameter) from 16 connections, as the bench's ingest-1
// workload does; it reports messages/s.
func BenchmarkInsertOne(b *testing.B) {
	payload := make([]byte, 100)
	benchInserts(b, "msgs/s", func(int) func(context.Context, *pgx.Conn, int) error {
		return func(ctx context.Context, c *pgx.Conn, _ int) error {
			_, err := c.Exec(ctx, "INSERT INTO bench_log (data) VALUES ($1)", payload)
			return err
		}
	})
}

// BenchmarkInsertDedup measures autocommit INSERTs with a producer, as the
// bench's ingest-dedup workload sends them: connection k is producer pk
// writing seqno 1, 2, 3, ..., every 10th statement a retry of the one
// before (a duplicate the store must drop). It reports statements/s.
func BenchmarkInsertDedup(b *testing.B) {
	payload := make([]byte, 100)
	benchInserts(b, "stmts/s", func(k int) func(context.Context, *pgx.Conn, int) error {
		producer := fmt.Sprintf("p%d", k)
		var seqno int64
		return func(ctx context.Context, c *pgx.Conn, i int) error {
			if i%10 != 9 {
				seqno++
			}
			_, err := c.Exec(ctx, "INSERT INTO bench_log (producer_id, seqno, data) VALUES ($1, $2, $3)", producer, seqno, payload)
			return err
		}
	})
}

// benchInserts runs b.N statements over 16 connections into a 4-partition
// topic bench_log: client k runs the statements newClient(k) returns, the
// i-th with i. It reports statements per second as unit.
func benchInserts(b *testing.B, unit string, newClient func(k int) func(context.Context, *pgx.Conn, int) error) {
	a := startTestServer(b)
	ctx := context.Background()
	exec(b, connect(b, a), "CREATE TOPIC bench_log WITH (min_active_partitions = 4)")
	const clients = 16
	per := b.N/clients + 1
	var wg sync.WaitGroup
	b.ResetTimer()
	for k := 0; k < clients; k++ {
		c, stmt := connect(b, a), newClient(k)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < per; i++ {
				if err := stmt(ctx, c, i); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	b.ReportMetric(float64(per*clients)/b.Elapsed().Seconds(), unit)
}
