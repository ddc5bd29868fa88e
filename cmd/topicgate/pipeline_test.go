package main

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"
)

// batchTags sends b as one pipeline and returns each statement's tag, or
// the first error.
func batchTags(ctx context.Context, c *pgx.Conn, b *pgx.Batch) ([]string, error) {
	br := c.SendBatch(ctx, b)
	var tags []string
	for range b.Len() {
		tag, err := br.Exec()
		if err != nil {
			br.Close()
			return tags, err
		}
		tags = append(tags, tag.String())
	}
	return tags, br.Close()
}

// TestPipelineImplicitTxn: the statements of a pipeline (a pgx Batch) are
// one implicit transaction, as in PostgreSQL; their INSERT tags count
// what the commit writes, duplicates of stored or staged (producer_id,
// seqno) left out.
func TestPipelineImplicitTxn(t *testing.T) {
	a := startTestServer(t)
	c := connect(t, a)
	ctx := context.Background()
	exec(t, c, "CREATE TOPIC pin (CONSUMER c)")
	exec(t, c, "CREATE TOPIC pout")
	count := func(topic string) int64 {
		var n int64
		require.NoError(t, c.QueryRow(ctx, "SELECT count(*) FROM "+topic).Scan(&n))
		return n
	}
	ins := "INSERT INTO pout (producer_id, seqno, data) VALUES ($1, $2, 'x')"

	// A lone INSERT is deduped at its commit, as in autocommit.
	require.Equal(t, "INSERT 0 1", exec(t, c, ins, "p", 5).String())
	require.Equal(t, "INSERT 0 0", exec(t, c, ins, "p", 5).String())

	// In a pipeline: a stored seqno, a new one, the same again, a later one.
	b := &pgx.Batch{}
	for _, seq := range []int{5, 6, 6, 7} {
		b.Queue(ins, "p", seq)
	}
	tags, err := batchTags(ctx, c, b)
	require.NoError(t, err)
	require.Equal(t, []string{"INSERT 0 0", "INSERT 0 1", "INSERT 0 0", "INSERT 0 1"}, tags)
	require.Equal(t, int64(3), count("pout"))

	// A failure rolls back the pipeline's INSERTs and its consumer read.
	exec(t, c, "INSERT INTO pin (data) VALUES ('a'), ('b')")
	b = &pgx.Batch{}
	b.Queue(ins, "p", 8)
	b.Queue("SELECT offset FROM pin WITH (CONSUMER = c) LIMIT 1")
	b.Queue("SELECT 1/$1::int4", 0)
	_, err = batchTags(ctx, c, b)
	var pe *pgconn.PgError
	require.ErrorAs(t, err, &pe)
	require.Equal(t, "22012", pe.Code)
	require.Equal(t, int64(3), count("pout"))
	var committed int64
	require.NoError(t, c.QueryRow(ctx, "SELECT committed_offset FROM sys.consumers WHERE topic = 'pin' AND consumer = 'c'").Scan(&committed))
	require.Equal(t, int64(0), committed, "the failed pipeline's read commits nothing")

	// Without the failure the INSERT and the read commit together at Sync.
	b = &pgx.Batch{}
	b.Queue(ins, "p", 8)
	b.Queue("SELECT offset FROM pin WITH (CONSUMER = c) LIMIT 1")
	_, err = batchTags(ctx, c, b)
	require.NoError(t, err)
	require.Equal(t, int64(4), count("pout"))
	require.NoError(t, c.QueryRow(ctx, "SELECT committed_offset FROM sys.consumers WHERE topic = 'pin' AND consumer = 'c'").Scan(&committed))
	require.Equal(t, int64(1), committed)
}

// TestTxnInsertTags: an INSERT in a transaction block counts what its
// commit will write, as PostgreSQL's INSERT ... ON CONFLICT DO NOTHING
// counts what it inserted; ROLLBACK TO SAVEPOINT forgets the seqnos staged
// after the savepoint.
func TestTxnInsertTags(t *testing.T) {
	a := startTestServer(t)
	c := connect(t, a)
	exec(t, c, "CREATE TOPIC tags")
	ins := "INSERT INTO tags (producer_id, seqno, data) VALUES ($1, $2, 'x')"
	exec(t, c, ins, "q", 1)
	exec(t, c, "BEGIN")
	require.Equal(t, "INSERT 0 0", exec(t, c, ins, "q", 1).String(), "stored")
	require.Equal(t, "INSERT 0 1", exec(t, c, ins, "q", 2).String())
	require.Equal(t, "INSERT 0 0", exec(t, c, ins, "q", 2).String(), "staged")
	require.Equal(t, "INSERT 0 1", exec(t, c, ins, "other", 1).String(), "another producer")
	exec(t, c, "SAVEPOINT s")
	require.Equal(t, "INSERT 0 1", exec(t, c, ins, "q", 3).String())
	exec(t, c, "ROLLBACK TO SAVEPOINT s")
	require.Equal(t, "INSERT 0 1", exec(t, c, ins, "q", 3).String(), "rolled back to before it")
	require.Equal(t, "INSERT 0 2", exec(t, c, "INSERT INTO tags (producer_id, seqno, data) VALUES ('q', 3, 'x'), ('q', 4, 'x'), ('q', 5, 'x')").String())
	exec(t, c, "COMMIT")
	var n int64
	require.NoError(t, c.QueryRow(context.Background(), "SELECT count(*) FROM tags").Scan(&n))
	require.Equal(t, int64(6), n)
}
