package main

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// TestPgxFuncsInFrom: parameters in the arguments of a function in FROM
// and in a bytea LIKE pattern take the argument's type through pgx's
// extended protocol, a lateral join over a topic's attributes streams
// with a parameter in its WHERE, and a long series in FROM stops at a
// statement timeout (57014), leaving the session usable.
func TestPgxFuncsInFrom(t *testing.T) {
	a := startTestServer(t)
	c := connect(t, a)
	ctx := context.Background()

	// (Untyped, the three parameters would be 42725, as in PostgreSQL.)
	var n, sum int64
	require.NoError(t, c.QueryRow(ctx, "SELECT count(*), sum(g) FROM generate_series($1::int, $2, $3) g", 10, 1, -3).Scan(&n, &sum))
	require.EqualValues(t, 4, n)
	require.EqualValues(t, 22, sum)
	var last time.Time
	require.NoError(t, c.QueryRow(ctx, "SELECT max(t) FROM generate_series($1::timestamptz, $2, $3::interval) t",
		time.Date(2024, 3, 30, 22, 0, 0, 0, time.UTC), time.Date(2024, 3, 31, 3, 30, 0, 0, time.UTC), "1 hour").Scan(&last))
	require.True(t, last.Equal(time.Date(2024, 3, 31, 3, 0, 0, 0, time.UTC)), "got %v", last)

	exec(t, c, "CREATE TOPIC fa")
	exec(t, c, `INSERT INTO fa (data, attrs) VALUES ('x-1', '{"k": "a", "j": "b"}'), ('y-2', '{"k": "c"}'), ('x%3', '{}')`)
	rows, err := c.Query(ctx, "SELECT e.value FROM fa f, jsonb_each_text(f.attrs) e WHERE e.key = $1 ORDER BY f.offset", "k")
	require.NoError(t, err)
	got, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	require.Equal(t, []string{"a", "c"}, got)
	require.NoError(t, c.QueryRow(ctx, "SELECT count(*) FROM fa WHERE data LIKE $1", []byte(`x\%_`)).Scan(&n))
	require.EqualValues(t, 1, n, `x\%_ is x, a literal %, one byte`)
	require.NoError(t, c.QueryRow(ctx, "SELECT count(*) FROM fa WHERE data NOT LIKE $1", []byte("x%")).Scan(&n))
	require.EqualValues(t, 1, n)

	exec(t, c, "SET statement_timeout = '200ms'")
	start := time.Now()
	_, err = c.Exec(ctx, "SELECT count(*) FROM generate_series(1, 9000000000000) g")
	require.ErrorContains(t, err, "57014")
	require.Less(t, time.Since(start), 5*time.Second)
	exec(t, c, "RESET statement_timeout")
	require.NoError(t, c.QueryRow(ctx, "SELECT count(*) FROM generate_series(1, 3) a, generate_series(a, 3) b").Scan(&n))
	require.EqualValues(t, 6, n)
}
