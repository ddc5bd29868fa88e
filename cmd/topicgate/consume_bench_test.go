package main

import (
	"context"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"
)

// BenchmarkConsumeRead measures a consumer read of 1000 messages of 100
// bytes through the front door (pgx, binary results), as the bench's
// consume workload does; it reports messages/s.
func BenchmarkConsumeRead(b *testing.B) {
	a := startTestServer(b)
	ctx := context.Background()
	c := connect(b, a)
	exec(b, c, "CREATE TOPIC bench_log (CONSUMER c) WITH (min_active_partitions = 1)")
	copyPayloads(b, c, "bench_log", 100000, 100000)
	read := 0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if read+1000 > 100000 {
			b.StopTimer()
			exec(b, c, "UPDATE sys.consumers SET committed_offset = 0 WHERE topic = 'bench_log'")
			read = 0
			b.StartTimer()
		}
		rows, err := c.Query(ctx, "SELECT partition, offset, data FROM bench_log WITH (CONSUMER = c) LIMIT 1000")
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for rows.Next() {
			var p, o int64
			var d []byte
			if err := rows.Scan(&p, &o, &d); err != nil {
				b.Fatal(err)
			}
			n++
		}
		if err := rows.Err(); err != nil || n != 1000 {
			b.Fatal(fmt.Sprint(err, n))
		}
		read += n
	}
	b.ReportMetric(float64(b.N*1000)/b.Elapsed().Seconds(), "msgs/s")
}

// copyPayloads loads n 100-byte messages into topic with COPYs of chunk
// rows each.
func copyPayloads(tb testing.TB, c *pgx.Conn, topic string, n, chunk int) {
	payload := make([]byte, 100)
	for done := 0; done < n; done += chunk {
		_, err := c.CopyFrom(context.Background(), pgx.Identifier{topic}, []string{"data"},
			pgx.CopyFromSlice(min(chunk, n-done), func(int) ([]any, error) { return []any{payload}, nil }))
		if err != nil {
			tb.Fatal(err)
		}
	}
}
