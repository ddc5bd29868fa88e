package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// The pgx scenario of TestDrivers: pgx's default statement cache (Parse
// with Describe, binary parameters and results), QueryExecModeSimpleProtocol
// for the simple path, pgx.BeginFunc, CopyFrom, Batch, and PgError codes.
func init() {
	goDrivers = append(goDrivers, goDriver{name: "pgx", run: pgxScenario})
}

func pgxScenario(ctx context.Context, r *goScenario, dsn string) {
	r.version("pgx " + modVersion("github.com/jackc/pgx/v5"))
	P := r.prefix
	var c *pgx.Conn
	r.check("connect", func() (string, error) {
		var err error
		if c, err = pgx.Connect(ctx, dsn); err != nil {
			return "", err
		}
		return "server_version " + c.PgConn().ParameterStatus("server_version"), nil
	})
	if c == nil {
		return
	}
	defer c.Close(context.Background())
	select1 := func() error {
		var one int
		if err := c.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil || one != 1 {
			return mismatch("SELECT 1 after the error: %d, %v", one, err)
		}
		return nil
	}
	r.check("create_topics", func() (string, error) {
		for _, t := range []string{"in (CONSUMER c)", "out", "bin", "copy"} {
			if _, err := c.Exec(ctx, "CREATE TOPIC "+P+t); err != nil {
				return "", err
			}
		}
		return "4 topics", nil
	})
	insert := "INSERT INTO " + P + "in (producer_id, seqno, data, attrs) VALUES ($1, $2, $3, $4)"
	r.check("insert_params", func() (string, error) {
		for i := 1; i <= 5; i++ {
			tag, err := c.Exec(ctx, insert, "prod", i, []byte(fmt.Sprintf("m%d", i)), map[string]string{"k": "v"})
			if err != nil {
				return "", err
			}
			if err := expectEqual(tag.RowsAffected(), int64(1), fmt.Sprintf("tag of seqno %d", i)); err != nil {
				return "", err
			}
		}
		tag, err := c.Exec(ctx, insert, "prod", 3, []byte("dup"), `{"k":"v"}`)
		if err != nil {
			return "", err
		}
		return "5 cached-statement inserts count 1, duplicate " + tag.String(), expectEqual(tag.String(), "INSERT 0 0", "tag of the duplicate")
	})
	r.check("insert_prepared", func() (string, error) {
		sd, err := c.Prepare(ctx, "ins", insert)
		if err != nil {
			return "", err
		}
		if err := expectEqual(sd.ParamOIDs, []uint32{25, 20, 17, 3802}, "parameter types"); err != nil {
			return "", err
		}
		b := &pgx.Batch{}
		for i := 6; i <= 10; i++ {
			b.Queue("ins", "prod", int64(i), []byte(fmt.Sprintf("m%d", i)), `{"k":"v"}`)
		}
		b.Queue("ins", "prod", int64(6), []byte("dup"), `{"k":"v"}`)
		br := c.SendBatch(ctx, b)
		var counts []int64
		for i := 0; i < 6; i++ {
			tag, err := br.Exec()
			if err != nil {
				br.Close()
				return "", err
			}
			counts = append(counts, tag.RowsAffected())
		}
		if err := br.Close(); err != nil {
			return "", err
		}
		return "named statement in a pipelined batch: counts 1,1,1,1,1,0", expectEqual(counts, []int64{1, 1, 1, 1, 1, 0}, "batch counts")
	})
	r.check("declared_param_types", func() (string, error) {
		// pgjdbc declares strings as varchar: ParameterDescription keeps
		// them, and a varchar parameter or cast is a varchar column.
		sd, err := c.PgConn().Prepare(ctx, "", "SELECT $1::varchar AS a, $2 AS b, CAST('c' AS varchar) AS c FROM "+P+"in WHERE producer_id = $3 AND seqno = $4 LIMIT 1",
			[]uint32{1043, 1043, 1043, 23})
		if err != nil {
			return "", err
		}
		var cols []uint32
		for _, f := range sd.Fields {
			cols = append(cols, f.DataTypeOID)
		}
		return "Parse(varchar, varchar, varchar, int4) → ParameterDescription and RowDescription varchar",
			firstErr(expectEqual(sd.ParamOIDs, []uint32{1043, 1043, 1043, 23}, "ParameterDescription"), expectEqual(cols, []uint32{1043, 1043, 1043}, "RowDescription types"))
	})
	r.check("bytea_roundtrip", func() (string, error) {
		want := data64K()
		if _, err := c.Exec(ctx, "INSERT INTO "+P+"bin (data) VALUES ($1)", want); err != nil {
			return "", err
		}
		var got, gotText []byte
		if err := c.QueryRow(ctx, "SELECT data FROM "+P+"bin").Scan(&got); err != nil {
			return "", err
		}
		if err := c.QueryRow(ctx, "SELECT data FROM "+P+"bin", pgx.QueryExecModeSimpleProtocol).Scan(&gotText); err != nil {
			return "", err
		}
		if !bytes.Equal(got, want) || !bytes.Equal(gotText, want) {
			return "", mismatch("64 KiB bytea differs (binary %d bytes, text %d bytes)", len(got), len(gotText))
		}
		return "65536 bytes, binary and text results", nil
	})
	r.check("jsonb_attrs", func() (string, error) {
		var m map[string]string
		var k string
		if err := c.QueryRow(ctx, "SELECT attrs, attrs->>'k' FROM "+P+"in WHERE seqno = $1", 1).Scan(&m, &k); err != nil {
			return "", err
		}
		return "attrs map[k:v]", firstErr(expectEqual(m, map[string]string{"k": "v"}, "attrs"), expectEqual(k, "v", "attrs->>'k'"))
	})
	r.check("timestamptz_param", func() (string, error) {
		ts := time.Date(2026, 1, 2, 3, 4, 5, 123456000, time.UTC)
		if _, err := c.Exec(ctx, "INSERT INTO "+P+"bin (data, created_at, message_group_id) VALUES ($1, $2, $3)", []byte("ts"), ts, "g1"); err != nil {
			return "", err
		}
		var got time.Time
		var g string
		if err := c.QueryRow(ctx, "SELECT created_at, message_group_id FROM "+P+"bin WHERE data = $1 AND written_at >= $2", []byte("ts"), ts).Scan(&got, &g); err != nil {
			return "", err
		}
		return "created_at = " + ts.Format(time.RFC3339Nano) + "; written_at >= $2", firstErr(expectEqual(got.UTC(), ts, "created_at"), expectEqual(g, "g1", "message_group_id"))
	})
	pairs := func(q string, args ...any) ([]string, error) {
		rows, _ := c.Query(ctx, q, args...)
		var out []string
		var a int64
		var b []byte
		_, err := pgx.ForEachRow(rows, []any{&a, &b}, func() error {
			out = append(out, fmt.Sprintf("%d:%s", a, b))
			return nil
		})
		return out, err
	}
	r.check("stateless_read", func() (string, error) {
		rows, _ := c.Query(ctx, "SELECT seqno, data FROM "+P+"in ORDER BY offset")
		var got []string
		var s int64
		var d []byte
		if _, err := pgx.ForEachRow(rows, []any{&s, &d}, func() error { got = append(got, fmt.Sprintf("%d:%s", s, d)); return nil }); err != nil {
			return "", err
		}
		var want []string
		for i := 1; i <= 10; i++ {
			want = append(want, fmt.Sprintf("%d:m%d", i, i))
		}
		if err := expectEqual(got, want, "all messages"); err != nil {
			return "", err
		}
		got2, err := pairs("SELECT offset, data FROM "+P+"in WHERE offset >= $1 ORDER BY offset LIMIT $2", 7, 2)
		if err != nil {
			return "", err
		}
		return "10 rows in order; WHERE/LIMIT parameters", expectEqual(got2, []string{"7:m8", "8:m9"}, "offset >= 7 LIMIT 2")
	})
	r.check("array_param", func() (string, error) {
		var n int64
		if err := c.QueryRow(ctx, "SELECT count(*) FROM "+P+"in WHERE partition = ANY($1) AND offset = ANY($2)", []int64{0, 5}, []int32{0, 1, 2}).Scan(&n); err != nil {
			return "", err
		}
		return "[]int64 and []int32 parameters with = ANY", expectEqual(n, int64(3), "count")
	})
	consume := func(q interface {
		Query(context.Context, string, ...any) (pgx.Rows, error)
	}, n int) ([]string, error) {
		rows, _ := q.Query(ctx, "SELECT offset, data FROM "+P+"in WITH (CONSUMER = c) LIMIT $1", n)
		var out []string
		var o int64
		var d []byte
		_, err := pgx.ForEachRow(rows, []any{&o, &d}, func() error { out = append(out, fmt.Sprintf("%d:%s", o, d)); return nil })
		return out, err
	}
	r.check("consumer_read", func() (string, error) {
		a, err := consume(c, 3)
		if err != nil {
			return "", err
		}
		b, err := consume(c, 3)
		if err != nil {
			return "", err
		}
		return "offsets 0-2 then 3-5", firstErr(expectEqual(a, []string{"0:m1", "1:m2", "2:m3"}, "first read"),
			expectEqual(b, []string{"3:m4", "4:m5", "5:m6"}, "second read"))
	})
	r.check("rpw_txn", func() (string, error) {
		err := pgx.BeginFunc(ctx, c, func(tx pgx.Tx) error {
			got, err := consume(tx, 2)
			if err != nil {
				return err
			}
			if err := expectEqual(got, []string{"6:m7", "7:m8"}, "read in the transaction"); err != nil {
				return err
			}
			for i, g := range got {
				if _, err := tx.Exec(ctx, "INSERT INTO "+P+"out (producer_id, seqno, data) VALUES ($1, $2, $3)", "rpw", 6+i, []byte(g)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return "", err
		}
		out, err := pairs("SELECT seqno, data FROM " + P + "out ORDER BY offset")
		if err != nil {
			return "", err
		}
		return "pgx.BeginFunc: read 6-7, wrote 2, committed", expectEqual(out, []string{"6:6:m7", "7:7:m8"}, "committed output")
	})
	r.check("rollback_rewind", func() (string, error) {
		var got []string
		errRollback := errors.New("roll back")
		err := pgx.BeginFunc(ctx, c, func(tx pgx.Tx) error {
			var err error
			if got, err = consume(tx, 2); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, "INSERT INTO "+P+"out (data) VALUES ($1)", []byte("never")); err != nil {
				return err
			}
			return errRollback
		})
		if !errors.Is(err, errRollback) {
			return "", err
		}
		again, err := consume(c, 10)
		if err != nil {
			return "", err
		}
		var n int64
		if err := c.QueryRow(ctx, "SELECT count(*) FROM "+P+"out").Scan(&n); err != nil {
			return "", err
		}
		return "8-9 read again, nothing written", firstErr(expectEqual(got, []string{"8:m9", "9:m10"}, "read in the transaction"),
			expectEqual(again, got, "read after ROLLBACK"), expectEqual(n, int64(2), "messages in out"))
	})
	r.check("nested_transaction", func() (string, error) {
		// tx.Begin inside a transaction is a savepoint.
		err := pgx.BeginFunc(ctx, c, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, "INSERT INTO "+P+"out (producer_id, seqno, data) VALUES ('nested', 1, 'outer')"); err != nil {
				return err
			}
			inner, err := tx.Begin(ctx)
			if err != nil {
				return err
			}
			if _, err := inner.Exec(ctx, "INSERT INTO "+P+"out (producer_id, seqno, data) VALUES ('nested', 2, 'inner')"); err != nil {
				return err
			}
			return inner.Rollback(ctx)
		})
		if err != nil {
			return "", err
		}
		var n int64
		if err := c.QueryRow(ctx, "SELECT count(*) FROM "+P+"out WHERE producer_id = 'nested'").Scan(&n); err != nil {
			return "", err
		}
		return "SAVEPOINT, ROLLBACK TO SAVEPOINT, COMMIT", expectEqual(n, int64(1), "the outer INSERT only")
	})
	r.check("copy_in", func() (string, error) {
		n, err := c.CopyFrom(ctx, pgx.Identifier{P + "copy"}, []string{"producer_id", "seqno", "data"},
			pgx.CopyFromRows([][]any{{"cp", int64(1), []byte("c1")}, {"cp", int64(2), []byte("c2")}, {"cp", int64(2), []byte("dup")}, {"cp", int64(3), data64K()}}))
		if err != nil {
			return "", err
		}
		got, err := pairs("SELECT seqno, data FROM " + P + "copy WHERE seqno < 3 ORDER BY offset")
		if err != nil {
			return "", err
		}
		var big []byte
		if err := c.QueryRow(ctx, "SELECT data FROM "+P+"copy WHERE seqno = 3").Scan(&big); err != nil {
			return "", err
		}
		return fmt.Sprintf("CopyFrom (binary): %d copied, duplicate skipped, 64 KiB row", n),
			firstErr(expectEqual(got, []string{"1:c1", "2:c2"}, "copied rows"), expectEqual(bytes.Equal(big, data64K()), true, "64 KiB row"))
	})
	r.check("copy_out", func() (string, error) {
		var buf bytes.Buffer
		tag, err := c.PgConn().CopyTo(ctx, &buf, "COPY (SELECT seqno, convert_from(data, 'UTF8') FROM "+P+"copy WHERE seqno < 3 ORDER BY offset) TO STDOUT")
		if err != nil {
			return "", err
		}
		return "CopyTo " + tag.String(), expectEqual(buf.String(), "1\tc1\n2\tc2\n", "COPY TO STDOUT")
	})
	expectErr := func(code, q string, args ...any) func() (string, error) {
		return func() (string, error) {
			rows, err := c.Query(ctx, q, args...)
			if err == nil {
				rows.Close()
				err = rows.Err()
			}
			if err == nil {
				return "", mismatch("no error from %s", q)
			}
			if got := pgCode(err); got != code {
				return "", mismatch("SQLSTATE of %s: got %q (%v), want %s", q, got, err, code)
			}
			return code + ", then SELECT 1", select1()
		}
	}
	simple := pgx.QueryExecModeSimpleProtocol
	r.check("error_42601_simple", expectErr("42601", "SELEC 1", simple))
	r.check("error_42601_extended", expectErr("42601", "SELEC $1", 1))
	r.check("error_42P01_simple", expectErr("42P01", "SELECT * FROM "+P+"missing", simple))
	r.check("error_42P01_extended", expectErr("42P01", "SELECT * FROM "+P+"missing WHERE offset = $1", 1))
	r.check("error_22012_simple", expectErr("22012", "SELECT 1/0", simple))
	r.check("error_22012_extended", expectErr("22012", "SELECT 1/$1::int4", 0))
	r.check("error_bad_param", expectErr("22P02", "SELECT offset FROM "+P+"in WHERE seqno = $1::text::int8", "abc"))
	r.check("error_bad_param_simple", expectErr("22P02", "SELECT offset FROM "+P+"in WHERE seqno = $1", simple, "abc"))
	r.check("error_copy", func() (string, error) {
		_, err := c.PgConn().CopyFrom(ctx, strings.NewReader("cp\tabc\tbad\n"), "COPY "+P+"copy (producer_id, seqno, data) FROM STDIN")
		if err := expectEqual(pgCode(err), "22P02", fmt.Sprintf("SQLSTATE of the COPY (%v)", err)); err != nil {
			return "", err
		}
		return "22P02 from a COPY row, then SELECT 1", select1()
	})
	r.check("error_in_batch", func() (string, error) {
		b := &pgx.Batch{}
		b.Queue("INSERT INTO "+P+"out (producer_id, seqno, data) VALUES ($1, $2, $3)", "batch-err", 1, []byte("a"))
		b.Queue("SELECT 1/$1::int4", 0)
		b.Queue("INSERT INTO "+P+"out (producer_id, seqno, data) VALUES ($1, $2, $3)", "batch-err", 2, []byte("b"))
		err := c.SendBatch(ctx, b).Close()
		if err := expectEqual(pgCode(err), "22012", fmt.Sprintf("SQLSTATE in the batch (%v)", err)); err != nil {
			return "", err
		}
		var n int64
		if err := c.QueryRow(ctx, "SELECT count(*) FROM "+P+"out WHERE producer_id = 'batch-err'").Scan(&n); err != nil {
			return "", err
		}
		return "22012 in a batch; its implicit transaction is not applied; SELECT 1", firstErr(expectEqual(n, int64(0), "messages of the failed batch"), select1())
	})
	r.check("error_25P02", func() (string, error) {
		tx, err := c.Begin(ctx)
		if err != nil {
			return "", err
		}
		defer tx.Rollback(ctx)
		_, err1 := tx.Exec(ctx, "SELECT 1/$1::int4", 0)
		_, err2 := tx.Exec(ctx, "SELECT 1")
		if err := firstErr(expectEqual(pgCode(err1), "22012", "first error"), expectEqual(pgCode(err2), "25P02", "statement in the failed transaction")); err != nil {
			return "", err
		}
		if err := tx.Rollback(ctx); err != nil {
			return "", err
		}
		return "22012, 25P02, ROLLBACK, SELECT 1", select1()
	})
	pgxRoles(ctx, r, c, dsn)
}

// pgxRoles is the roles_* checks (drivers_test.go): c is the bootstrap
// connection.
func pgxRoles(ctx context.Context, r *goScenario, c *pgx.Conn, dsn string) {
	role, topic := r.prefix+"writer", r.prefix+"granted"
	r.check("roles_grant", func() (string, error) {
		for _, q := range roleSetup(role, topic) {
			if _, err := c.Exec(ctx, q); err != nil {
				return "", fmt.Errorf("%s: %w", q, err)
			}
		}
		return "CREATE ROLE " + role + " LOGIN PASSWORD, CREATE TOPIC, GRANT INSERT ON TOPIC", nil
	})
	var rc *pgx.Conn
	r.check("roles_login", func() (string, error) {
		var err error
		if rc, err = pgx.Connect(ctx, dsnAs(dsn, role, rolePassword)); err != nil {
			return "", err
		}
		var user string
		if err := rc.QueryRow(ctx, "SELECT current_user").Scan(&user); err != nil {
			return "", err
		}
		return "pgx.Connect as the role (SCRAM-SHA-256), current_user " + user, expectEqual(user, role, "current_user")
	})
	if rc != nil {
		defer rc.Close(context.Background())
	}
	noRole := mismatch("no connection as %s (roles_login failed)", role)
	r.check("roles_insert", func() (string, error) {
		if rc == nil {
			return "", noRole
		}
		tag, err := rc.Exec(ctx, "INSERT INTO "+topic+" (data) VALUES ($1)", []byte("by-role"))
		if err != nil {
			return "", err
		}
		var data string
		if err := c.QueryRow(ctx, "SELECT convert_from(data, 'UTF8') FROM "+topic).Scan(&data); err != nil {
			return "", err
		}
		return "INSERT with a bytea parameter: " + tag.String() + ", read back as the bootstrap user",
			firstErr(expectEqual(tag.String(), "INSERT 0 1", "tag"), expectEqual(data, "by-role", "the message"))
	})
	r.check("roles_denied", func() (string, error) {
		if rc == nil {
			return "", noRole
		}
		_, err := rc.Exec(ctx, "SELECT data FROM "+topic+" WHERE offset >= $1", 0)
		var pe *pgconn.PgError
		if !errors.As(err, &pe) {
			return "", mismatch("SELECT as the role: got %v, want 42501", err)
		}
		var one int
		if err := rc.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil {
			return "", fmt.Errorf("SELECT 1 after the error: %w", err)
		}
		return "42501 permission denied for topic " + topic + " (PgError), then SELECT 1",
			firstErr(expectEqual(pe.Code, "42501", "SQLSTATE"), expectEqual(pe.Message, "permission denied for topic "+topic, "message"))
	})
	r.check("roles_bad_password", func() (string, error) {
		bad, err := pgx.Connect(ctx, dsnAs(dsn, role, roleWrongPassword))
		if err == nil {
			bad.Close(ctx)
			return "", mismatch("a wrong password logged in")
		}
		return "28P01 (PgError)", expectEqual(pgCode(err), "28P01", fmt.Sprintf("SQLSTATE (%v)", err))
	})
}
