package main

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/stretchr/testify/require"
)

// TestPgxCursor reads a topic through a server-side cursor the way
// psycopg2's named cursors do (DECLARE ... WITHOUT HOLD, FETCH FORWARD n,
// CLOSE), over pgx's extended protocol with binary results and a $1
// parameter in the cursor's query, and checks PostgreSQL's command tags.
func TestPgxCursor(t *testing.T) {
	a := startTestServer(t)
	c := connect(t, a)
	ctx := context.Background()
	fillTopic(t, c, "events", 3, 30)

	// Outside a transaction block, only WITH HOLD.
	_, err := c.Exec(ctx, `DECLARE "cur" CURSOR WITHOUT HOLD FOR SELECT offset FROM events`)
	require.Equal(t, "25P01", pgCode(err), "%v", err)

	tx, err := c.Begin(ctx)
	require.NoError(t, err)
	tag, err := tx.Exec(ctx, `DECLARE "cur" CURSOR WITHOUT HOLD FOR SELECT partition, offset, data FROM events WHERE partition = $1`, int64(1))
	require.NoError(t, err)
	require.Equal(t, "DECLARE CURSOR", tag.String())
	var got []string
	for {
		rows, err := tx.Query(ctx, `FETCH FORWARD 4 FROM "cur"`)
		require.NoError(t, err)
		n := 0
		for rows.Next() {
			var p, off int64
			var data []byte
			require.NoError(t, rows.Scan(&p, &off, &data))
			got = append(got, fmt.Sprintf("%d/%d=%s", p, off, data))
			n++
		}
		require.NoError(t, rows.Err())
		require.Equal(t, fmt.Sprintf("FETCH %d", n), rows.CommandTag().String())
		if n < 4 {
			break
		}
	}
	require.Len(t, got, 10)
	require.Equal(t, "1/0=1", got[0])
	require.Equal(t, "1/9=28", got[9])

	tag, err = tx.Exec(ctx, `MOVE FORWARD 2 FROM "cur"`)
	require.NoError(t, err)
	require.Equal(t, "MOVE 0", tag.String(), "the cursor is at its end")
	tag, err = tx.Exec(ctx, `CLOSE "cur"`)
	require.NoError(t, err)
	require.Equal(t, "CLOSE CURSOR", tag.String())
	_, err = tx.Exec(ctx, `FETCH 1 FROM "cur"`)
	require.Equal(t, "34000", pgCode(err), "%v", err)
	require.NoError(t, tx.Rollback(ctx))

	// A cursor ends with its block; WITH HOLD outlives it.
	tx, err = c.Begin(ctx)
	require.NoError(t, err)
	_, err = tx.Exec(ctx, "DECLARE gone CURSOR FOR SELECT offset FROM events")
	require.NoError(t, err)
	_, err = tx.Exec(ctx, "DECLARE kept CURSOR WITH HOLD FOR SELECT offset FROM events WHERE partition = 0 ORDER BY offset DESC")
	require.NoError(t, err)
	require.NoError(t, tx.Commit(ctx))
	_, err = c.Exec(ctx, "FETCH 1 FROM gone")
	require.Equal(t, "34000", pgCode(err), "%v", err)
	var off int64
	require.NoError(t, c.QueryRow(ctx, "FETCH 1 FROM kept").Scan(&off))
	require.Equal(t, int64(9), off)
	tag, err = c.Exec(ctx, "MOVE ALL FROM kept")
	require.NoError(t, err)
	require.Equal(t, "MOVE 9", tag.String())
	tag, err = c.Exec(ctx, "CLOSE ALL")
	require.NoError(t, err)
	require.Equal(t, "CLOSE CURSOR ALL", tag.String())

	// A read as a consumer cannot be a cursor's query.
	exec(t, c, "ALTER TOPIC events ADD CONSUMER etl")
	tx, err = c.Begin(ctx)
	require.NoError(t, err)
	_, err = tx.Exec(ctx, "DECLARE x CURSOR FOR SELECT data FROM events WITH (CONSUMER = etl) LIMIT 5")
	require.Equal(t, "0A000", pgCode(err), "%v", err)
	require.Contains(t, err.Error(), `a read as consumer "etl" in a cursor is not supported`)
	require.NoError(t, tx.Rollback(ctx))

	// The simple protocol, several statements in one query.
	res, err := c.PgConn().Exec(ctx, "BEGIN; DECLARE s CURSOR FOR SELECT offset FROM events WHERE partition = 2; FETCH 2 FROM s; MOVE 3 IN s; FETCH NEXT FROM s; COMMIT").ReadAll()
	require.NoError(t, err)
	var tags []string
	for _, r := range res {
		tags = append(tags, r.CommandTag.String())
	}
	require.Equal(t, []string{"BEGIN", "DECLARE CURSOR", "FETCH 2", "MOVE 3", "FETCH 1", "COMMIT"}, tags)
	require.Equal(t, "5", string(res[4].Rows[0][0]))
	require.Equal(t, "offset", string(res[2].FieldDescriptions[0].Name))
}

// TestPsqlFetchCount: psql with FETCH_COUNT reads a query's rows through
// a cursor (BEGIN, DECLARE _psql_cursor NO SCROLL CURSOR, FETCH FORWARD n,
// CLOSE, COMMIT) and prints them as one table.
func TestPsqlFetchCount(t *testing.T) {
	a := startTestServer(t)
	c := connect(t, a)
	fillTopic(t, c, "nums", 1, 7)
	r := runPsql(t, a, "-v", "ON_ERROR_STOP=1", "-v", "FETCH_COUNT=3", "-A", "-t", "-c",
		"SELECT offset, convert_from(data, 'UTF8') FROM nums")
	psqlRequireOK(t, r)
	psqlRequireText(t, "0|0\n1|1\n2|2\n3|3\n4|4\n5|5\n6|6\n", r.stdout, "FETCH_COUNT output")
	if strings.Contains(r.stderr, "ERROR") {
		t.Errorf("stderr: %s", r.stderr)
	}
}

// TestPgxCursorRedeclared: pgx caches the prepared FETCH by its text; a
// later cursor of the same name with other columns gets a clear error, not
// rows that the cached RowDescription misdescribes.
func TestPgxCursorRedeclared(t *testing.T) {
	a := startTestServer(t)
	c := connect(t, a)
	ctx := context.Background()
	fillTopic(t, c, "ev", 1, 3)
	tx, err := c.Begin(ctx)
	require.NoError(t, err)
	_, err = tx.Exec(ctx, "DECLARE cur CURSOR FOR SELECT offset FROM ev")
	require.NoError(t, err)
	var off int64
	require.NoError(t, tx.QueryRow(ctx, "FETCH 1 FROM cur").Scan(&off))
	_, err = tx.Exec(ctx, "CLOSE cur")
	require.NoError(t, err)
	_, err = tx.Exec(ctx, "DECLARE cur CURSOR FOR SELECT offset AS o2 FROM ev")
	require.NoError(t, err)
	require.NoError(t, tx.QueryRow(ctx, "FETCH 1 FROM cur").Scan(&off), "same column types: fine")
	_, err = tx.Exec(ctx, "CLOSE cur")
	require.NoError(t, err)
	_, err = tx.Exec(ctx, "DECLARE cur CURSOR FOR SELECT data FROM ev")
	require.NoError(t, err)
	var data []byte
	err = tx.QueryRow(ctx, "FETCH 1 FROM cur").Scan(&data)
	require.Equal(t, "0A000", pgCode(err), "%v", err)
	require.NoError(t, tx.Rollback(ctx))
}

// TestFetchOwnPortal: a FETCH bound to portal p that names p is refused
// (55000), not run inside itself; the connection goes on.
func TestFetchOwnPortal(t *testing.T) {
	a := startTestServer(t)
	_, fe := startupRaw(t, a)
	fe.Send(&pgproto3.Parse{Query: "FETCH ALL FROM p"})
	fe.Send(&pgproto3.Bind{DestinationPortal: "p"})
	fe.Send(&pgproto3.Execute{Portal: "p"})
	fe.Send(&pgproto3.Sync{})
	fe.Send(&pgproto3.Query{String: "SELECT 1"})
	if err := fe.Flush(); err != nil {
		t.Fatal(err)
	}
	var codes []string
	rfq := 0
	for rfq < 2 {
		msg, err := fe.Receive()
		if err != nil {
			t.Fatal(err)
		}
		switch m := msg.(type) {
		case *pgproto3.ErrorResponse:
			codes = append(codes, m.Code)
		case *pgproto3.ReadyForQuery:
			rfq++
		}
	}
	if len(codes) != 1 || codes[0] != "55000" {
		t.Fatalf("errors %v, want one 55000", codes)
	}
}
