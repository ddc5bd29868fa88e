package main

import (
	"context"
	"fmt"
	"sync"
	"testing"
)

// BenchmarkInsertOne measures single-message autocommit INSERTs (prepared,
// binary bytea parameter) from 16 connections, as the bench's ingest-1
// workload does; it reports messages/s.
func BenchmarkInsertOne(b *testing.B) {
	a := startTestServer(b)
	ctx := context.Background()
	setup := connect(b, a)
	exec(b, setup, "CREATE TOPIC bench_log WITH (min_active_partitions = 4)")
	const clients = 16
	payload := make([]byte, 100)
	per := b.N/clients + 1
	var wg sync.WaitGroup
	b.ResetTimer()
	for k := 0; k < clients; k++ {
		c := connect(b, a)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < per; i++ {
				if _, err := c.Exec(ctx, "INSERT INTO bench_log (data) VALUES ($1)", payload); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	b.ReportMetric(float64(per*clients)/b.Elapsed().Seconds(), "msgs/s")
}

// BenchmarkInsertDedup measures autocommit INSERTs with a producer, as the
// bench's ingest-dedup workload sends them: 16 connections, connection k
// is producer pk writing seqno 1, 2, 3, ..., every 10th statement a retry
// of the one before (a duplicate the store must drop). It reports
// statements/s.
func BenchmarkInsertDedup(b *testing.B) {
	a := startTestServer(b)
	ctx := context.Background()
	setup := connect(b, a)
	exec(b, setup, "CREATE TOPIC bench_log WITH (min_active_partitions = 4)")
	const clients = 16
	payload := make([]byte, 100)
	per := b.N/clients + 1
	var wg sync.WaitGroup
	b.ResetTimer()
	for k := 0; k < clients; k++ {
		c := connect(b, a)
		producer := fmt.Sprintf("p%d", k)
		wg.Add(1)
		go func() {
			defer wg.Done()
			var seqno int64
			for i := 1; i <= per; i++ {
				if i%10 != 0 {
					seqno++
				}
				if _, err := c.Exec(ctx, "INSERT INTO bench_log (producer_id, seqno, data) VALUES ($1, $2, $3)", producer, seqno, payload); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	b.ReportMetric(float64(per*clients)/b.Elapsed().Seconds(), "stmts/s")
}
