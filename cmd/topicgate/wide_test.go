package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// TestWideTransactions: transactions far wider than one atomic batch of
// the cluster (1,000 messages) commit whole through the front door, on
// both stores (TOPICGATE_TEST_STORE): one COPY with 10,000 distinct
// producers (on the cluster each producer's dedup state is a message of its
// own), one COPY into and one consumer read over the 4,096 partitions of a
// topic (a record batch, then a position, per partition), and one
// transaction that stages 1 GiB in 256 KiB chunks (each joins by a
// reference record of its own; 128 MiB with -short).
func TestWideTransactions(t *testing.T) {
	a := startTestServer(t)
	ctx := context.Background()

	t.Run("10000 producers", func(t *testing.T) {
		c := connect(t, a)
		exec(t, c, "CREATE TOPIC wide WITH (min_active_partitions = 4)")
		rows := make([][]any, 10000)
		for i := range rows {
			rows[i] = []any{fmt.Sprintf("p%05d", i), int64(1), []byte(fmt.Sprint(i))}
		}
		t0 := time.Now()
		n, err := c.CopyFrom(ctx, pgx.Identifier{"wide"}, []string{"producer_id", "seqno", "data"}, pgx.CopyFromRows(rows))
		require.NoError(t, err)
		require.Equal(t, int64(10000), n)
		t.Logf("COPY of 10,000 rows, each of its own producer: %v", time.Since(t0).Round(time.Millisecond))
		var msgs, producers int64
		require.NoError(t, c.QueryRow(ctx, "SELECT count(*) FROM wide").Scan(&msgs))
		require.NoError(t, c.QueryRow(ctx, "SELECT count(*) FROM sys.producers WHERE topic = 'wide'").Scan(&producers))
		require.Equal(t, int64(10000), msgs)
		require.Equal(t, int64(10000), producers)
		// Sent again, every row is a duplicate.
		n, err = c.CopyFrom(ctx, pgx.Identifier{"wide"}, []string{"producer_id", "seqno", "data"}, pgx.CopyFromRows(rows))
		require.NoError(t, err)
		require.Equal(t, int64(0), n)
		require.NoError(t, c.QueryRow(ctx, "SELECT count(*) FROM wide").Scan(&msgs))
		require.Equal(t, int64(10000), msgs)
	})

	t.Run("4096 partitions", func(t *testing.T) {
		c := connect(t, a)
		exec(t, c, "CREATE TOPIC wp (CONSUMER c) WITH (min_active_partitions = 4096)")
		rows := make([][]any, 4096)
		for i := range rows {
			rows[i] = []any{int32(i), []byte(fmt.Sprint(i))}
		}
		t0 := time.Now()
		n, err := c.CopyFrom(ctx, pgx.Identifier{"wp"}, []string{"partition", "data"}, pgx.CopyFromRows(rows))
		require.NoError(t, err)
		require.Equal(t, int64(4096), n)
		copied := time.Since(t0)
		t0 = time.Now()
		got, err := c.Query(ctx, "SELECT partition, data FROM wp WITH (CONSUMER = c) LIMIT 10000")
		require.NoError(t, err)
		seen := map[int32]bool{}
		for got.Next() {
			var p int32
			var data []byte
			require.NoError(t, got.Scan(&p, &data))
			require.Equal(t, fmt.Sprint(p), string(data))
			seen[p] = true
		}
		require.NoError(t, got.Err())
		require.Len(t, seen, 4096)
		t.Logf("COPY into 4,096 partitions: %v; a consumer read of all of them, its positions committed: %v",
			copied.Round(time.Millisecond), time.Since(t0).Round(time.Millisecond))
		var moved int64
		require.NoError(t, c.QueryRow(ctx, "SELECT count(*) FROM sys.consumers WHERE topic = 'wp' AND consumer = 'c' AND committed_offset = 1").Scan(&moved))
		require.Equal(t, int64(4096), moved, "every partition's position moved")
	})

	t.Run("1 GiB staged", func(t *testing.T) {
		mib := 1024
		if testing.Short() {
			mib = 128
		}
		const rowBytes = 128 << 10
		c := connect(t, a)
		exec(t, c, "CREATE TOPIC gib")
		payload := make([]byte, 1<<20)
		for i := range payload {
			payload[i] = byte(rand.Uint32())
		}
		t0 := time.Now()
		exec(t, c, "BEGIN")
		for range mib {
			copyMiB(t, c, "gib", "tx", payload, rowBytes)
		}
		staged := time.Since(t0)
		t0 = time.Now()
		exec(t, c, "COMMIT")
		t.Logf("%d MiB transaction: staged in %v, committed in %v", mib, staged.Round(time.Millisecond), time.Since(t0).Round(time.Millisecond))
		want := int64(mib) * (1 << 20 / rowBytes)
		var end, count int64
		require.NoError(t, c.QueryRow(ctx, "SELECT end_offset FROM sys.partitions WHERE topic = 'gib'").Scan(&end))
		require.Equal(t, want, end)
		require.NoError(t, c.QueryRow(ctx, "SELECT count(*) FROM gib WHERE message_group_id = 'tx'").Scan(&count))
		require.Equal(t, want, count)
		var data []byte
		require.NoError(t, c.QueryRow(ctx, "SELECT data FROM gib WHERE partition = 0 AND offset = $1", want-1).Scan(&data))
		require.Equal(t, payload[len(payload)-rowBytes:], data)
	})
}
