package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"topicgate/internal/kafkaload"
)

// TestKafkaLoad runs cmd/kafkaload's workloads (package
// internal/kafkaload) on the door, small: produce 3200 records from 4
// idempotent producers in Produce requests of 100 and fetch every one
// back (SQL counts them too), then produce again asynchronously with a
// linger and lz4, and for 200 ms, and rpw: 4 transactional
// read-process-write jobs that answer every input exactly once.
func TestKafkaLoad(t *testing.T) {
	a := startKafkaServer(t, nil)
	ctx := testCtx(t)
	cfg := &kafkaload.Config{Brokers: []string{a.KafkaAddr()}, Topic: "load", Partitions: 4,
		Clients: 4, Messages: 3200, Size: 100, Batch: 100, Compression: "none", Timeout: time.Minute}

	p := kafkaload.Run(ctx, cfg, "produce")
	require.NoError(t, p.Err())
	require.EqualValues(t, 3200, p.Messages)
	require.EqualValues(t, 4*8, p.Ops, "Produce batches: 800 per client")
	f := kafkaload.Run(ctx, cfg, "fetch")
	require.NoError(t, f.Err())
	require.EqualValues(t, p.Messages, f.Messages, "fetched = produced")
	require.Zero(t, f.Duplicates)
	var n int64
	require.NoError(t, connect(t, a).QueryRow(ctx, "SELECT count(*) FROM load").Scan(&n))
	require.EqualValues(t, 3200, n)

	cfg.Linger, cfg.Compression = 5*time.Millisecond, "lz4"
	p = kafkaload.Run(ctx, cfg, "produce")
	require.NoError(t, p.Err())
	require.EqualValues(t, 3200, p.Messages)
	f = kafkaload.Run(ctx, cfg, "fetch")
	require.NoError(t, f.Err())
	require.EqualValues(t, 3200, f.Messages)

	cfg.Linger, cfg.Duration = 0, 200*time.Millisecond // as long as that takes, as ingest-batch
	p = kafkaload.Run(ctx, cfg, "produce")
	require.NoError(t, p.Err())
	require.Positive(t, p.Messages)
	require.Equal(t, p.Messages, 100*p.Ops)
	f = kafkaload.Run(ctx, cfg, "fetch")
	require.NoError(t, f.Err())
	require.Equal(t, p.Messages, f.Messages)

	cfg.Messages, cfg.Duration = 1000, 0
	r := kafkaload.Run(ctx, cfg, "rpw")
	require.NoError(t, r.Err())
	require.EqualValues(t, 1000, r.Messages)
	require.Zero(t, r.Duplicates)
}
