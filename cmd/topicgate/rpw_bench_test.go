package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// BenchmarkRPWTxn measures one read-process-write transaction through the
// front door as the bench's rpw workload sends it: BEGIN, a consumer read of
// 100 messages, one INSERT of 100 bytea parameters, COMMIT. One client, so
// it is bound by the commit's fsync; use it with -cpuprofile to see the
// server's CPU per transaction. It reports messages/s and the server-side
// allocations are included in the allocs/op figure.
func BenchmarkRPWTxn(b *testing.B) {
	a := startTestServer(b)
	ctx := context.Background()
	c := connect(b, a)
	exec(b, c, "CREATE TOPIC rpw_in (CONSUMER c) WITH (min_active_partitions = 1)")
	exec(b, c, "CREATE TOPIC rpw_out WITH (min_active_partitions = 1)")
	const total = 100000
	copyPayloads(b, c, "rpw_in", total, 1000) // the bench prefills in COPYs of 1000
	vals := make([]string, 100)
	for i := range vals {
		vals[i] = fmt.Sprintf("($%d)", i+1)
	}
	insert := "INSERT INTO rpw_out (data) VALUES " + strings.Join(vals, ", ")
	args := make([]any, 100)
	read := 0
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if read+100 > total {
			b.StopTimer()
			exec(b, c, "UPDATE sys.consumers SET committed_offset = 0 WHERE topic = 'rpw_in'")
			read = 0
			b.StartTimer()
		}
		tx, err := c.Begin(ctx)
		if err != nil {
			b.Fatal(err)
		}
		rows, err := tx.Query(ctx, "SELECT partition, offset, data FROM rpw_in WITH (CONSUMER = c) LIMIT 100")
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
			args[n] = d
			n++
		}
		if err := rows.Err(); err != nil || n != 100 {
			b.Fatal(fmt.Sprint(err, n))
		}
		if _, err := tx.Exec(ctx, insert, args...); err != nil {
			b.Fatal(err)
		}
		if err := tx.Commit(ctx); err != nil {
			b.Fatal(err)
		}
		read += n
	}
	b.ReportMetric(float64(b.N*100)/b.Elapsed().Seconds(), "msgs/s")
}
