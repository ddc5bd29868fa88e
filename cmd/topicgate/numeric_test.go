package main

import (
	"context"
	"math/big"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/stretchr/testify/require"
)

// TestPgxNumeric: numerics travel exactly, with their scale, in pgx's binary
// format both ways, and sums of amounts in message attributes are exact.
func TestPgxNumeric(t *testing.T) {
	a := startTestServer(t)
	c := connect(t, a)
	ctx := context.Background()
	exec(t, c, "CREATE TOPIC payments")
	for i := 0; i < 1000; i++ {
		exec(t, c, `INSERT INTO payments (data, attrs) VALUES ('p', '{"amount":"0.10"}')`)
	}

	// Binary results (pgx asks for binary numerics with a described statement).
	var sum, avg pgtype.Numeric
	var sumText, avgText string
	require.NoError(t, c.QueryRow(ctx, `SELECT sum((attrs->>'amount')::numeric), avg((attrs->>'amount')::numeric),
		sum((attrs->>'amount')::numeric)::text, avg((attrs->>'amount')::numeric)::text FROM payments`).Scan(&sum, &avg, &sumText, &avgText))
	require.Equal(t, "100.00", sumText, "a float64 sum of 1000 × 0.10 is 99.9999999999986")
	require.Equal(t, "0.10000000000000000000", avgText)
	require.Equal(t, pgtype.Numeric{Int: big.NewInt(10000), Exp: -2, Valid: true}, sum)
	require.Equal(t, int32(-20), avg.Exp)

	// Binary parameters: pgx encodes a pgtype.Numeric (and a string for a
	// numeric parameter) in binary; the server keeps every digit.
	big30, _ := new(big.Int).SetString("123456789012345678901234567890", 10)
	var got string
	require.NoError(t, c.QueryRow(ctx, "SELECT ($1::numeric * 2)::text",
		pgtype.Numeric{Int: big30, Exp: -3, Valid: true}).Scan(&got))
	require.Equal(t, "246913578024691357802469135.780", got)
	require.NoError(t, c.QueryRow(ctx, "SELECT ($1::numeric + 1)::text", "9007199254740993").Scan(&got))
	require.Equal(t, "9007199254740994", got)

	// The same through the simple protocol, in text.
	require.NoError(t, c.QueryRow(ctx, "SELECT 1/3::numeric", pgx.QueryExecModeSimpleProtocol).Scan(&got))
	require.Equal(t, "0.33333333333333333333", got)
}
