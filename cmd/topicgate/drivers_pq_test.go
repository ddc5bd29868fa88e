package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/lib/pq"
)

// The lib/pq scenario of TestDrivers, through database/sql: Exec/Query
// with arguments (extended protocol, untyped text parameters), without
// them (simple protocol), Prepare, BeginTx + Commit/Rollback, pq.CopyIn,
// and *pq.Error codes.
func init() {
	goDrivers = append(goDrivers, goDriver{name: "lib-pq", run: libpqScenario})
}

// modVersion is the version of module path that go.mod requires (a test
// binary's build info has no dependency list).
func modVersion(path string) string {
	b, err := os.ReadFile(filepath.Join("..", "..", "go.mod"))
	if err != nil {
		return "(unknown)"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == path {
			return f[1]
		}
	}
	return "(unknown)"
}

func pqCode(err error) string {
	var pe *pq.Error
	if errors.As(err, &pe) {
		return string(pe.Code)
	}
	return ""
}

func libpqScenario(ctx context.Context, r *goScenario, dsn string) {
	r.version("lib-pq " + modVersion("github.com/lib/pq"))
	P := r.prefix
	db, err := sql.Open("postgres", dsn)
	if err != nil {
		r.check("connect", func() (string, error) { return "", err })
		return
	}
	defer db.Close()
	// One connection: a consumer's read session is its connection.
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)

	okFirst := false
	r.check("connect", func() (string, error) {
		var v string
		if err := db.QueryRowContext(ctx, "SHOW server_version").Scan(&v); err != nil {
			return "", err
		}
		okFirst = true
		return "server_version " + v, nil
	})
	if !okFirst {
		return
	}
	select1 := func() error {
		var one int
		if err := db.QueryRowContext(ctx, "SELECT 1").Scan(&one); err != nil || one != 1 {
			return mismatch("SELECT 1 after the error: %d, %v", one, err)
		}
		return nil
	}
	affected := func(res sql.Result, err error) (int64, error) {
		if err != nil {
			return 0, err
		}
		return res.RowsAffected()
	}

	r.check("create_topics", func() (string, error) {
		for _, t := range []string{"in (CONSUMER c)", "out", "bin", "copy"} {
			if _, err := db.ExecContext(ctx, "CREATE TOPIC "+P+t); err != nil {
				return "", err
			}
		}
		return "4 topics", nil
	})
	insert := "INSERT INTO " + P + "in (producer_id, seqno, data, attrs) VALUES ($1, $2, $3, $4)"
	r.check("insert_params", func() (string, error) {
		for i := 1; i <= 5; i++ {
			n, err := affected(db.ExecContext(ctx, insert, "prod", i, []byte(fmt.Sprintf("m%d", i)), `{"k":"v"}`))
			if err != nil {
				return "", err
			}
			if err := expectEqual(n, int64(1), fmt.Sprintf("RowsAffected of seqno %d", i)); err != nil {
				return "", err
			}
		}
		n, err := affected(db.ExecContext(ctx, insert, "prod", 3, []byte("dup"), `{"k":"v"}`))
		if err != nil {
			return "", err
		}
		return "5 inserts count 1, duplicate counts 0", expectEqual(n, int64(0), "RowsAffected of the duplicate (prod, 3)")
	})
	r.check("insert_prepared", func() (string, error) {
		st, err := db.PrepareContext(ctx, insert)
		if err != nil {
			return "", err
		}
		defer st.Close()
		for i := 6; i <= 10; i++ {
			n, err := affected(st.ExecContext(ctx, "prod", int64(i), []byte(fmt.Sprintf("m%d", i)), `{"k":"v"}`))
			if err != nil {
				return "", err
			}
			if err := expectEqual(n, int64(1), fmt.Sprintf("RowsAffected of prepared seqno %d", i)); err != nil {
				return "", err
			}
		}
		n, err := affected(st.ExecContext(ctx, "prod", int64(6), []byte("dup"), `{"k":"v"}`))
		if err != nil {
			return "", err
		}
		return "5 prepared inserts, duplicate counts 0", expectEqual(n, int64(0), "RowsAffected of the prepared duplicate")
	})
	r.check("bytea_roundtrip", func() (string, error) {
		want := data64K()
		if _, err := db.ExecContext(ctx, "INSERT INTO "+P+"bin (data) VALUES ($1)", want); err != nil {
			return "", err
		}
		var got []byte
		if err := db.QueryRowContext(ctx, "SELECT data FROM "+P+"bin").Scan(&got); err != nil {
			return "", err
		}
		if !bytes.Equal(got, want) {
			return "", mismatch("64 KiB bytea differs (got %d bytes)", len(got))
		}
		return "65536 bytes", nil
	})
	r.check("jsonb_attrs", func() (string, error) {
		var raw []byte
		var k string
		if err := db.QueryRowContext(ctx, "SELECT attrs, attrs->>'k' FROM "+P+"in WHERE seqno = $1", 1).Scan(&raw, &k); err != nil {
			return "", err
		}
		var m map[string]string
		if err := json.Unmarshal(raw, &m); err != nil {
			return "", err
		}
		return "attrs " + string(raw), firstErr(expectEqual(m, map[string]string{"k": "v"}, "attrs"), expectEqual(k, "v", "attrs->>'k'"))
	})
	r.check("timestamptz_param", func() (string, error) {
		ts := time.Date(2026, 1, 2, 3, 4, 5, 123456000, time.UTC)
		if _, err := db.ExecContext(ctx, "INSERT INTO "+P+"bin (data, created_at, message_group_id) VALUES ($1, $2, $3)", []byte("ts"), ts, "g1"); err != nil {
			return "", err
		}
		var got time.Time
		var g string
		if err := db.QueryRowContext(ctx, "SELECT created_at, message_group_id FROM "+P+"bin WHERE data = $1 AND written_at >= $2", []byte("ts"), ts).Scan(&got, &g); err != nil {
			return "", err
		}
		return "created_at = " + ts.Format(time.RFC3339Nano) + "; written_at >= $2", firstErr(expectEqual(got.UTC(), ts, "created_at"), expectEqual(g, "g1", "message_group_id"))
	})
	// pairsOn runs a query of (bigint, bytea) rows on q (the pool or a
	// transaction) and renders them "a:b".
	pairsOn := func(q interface {
		QueryContext(context.Context, string, ...any) (*sql.Rows, error)
	}, query string, args ...any) ([]string, error) {
		rows, err := q.QueryContext(ctx, query, args...)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var a int64
			var b []byte
			if err := rows.Scan(&a, &b); err != nil {
				return nil, err
			}
			out = append(out, fmt.Sprintf("%d:%s", a, b))
		}
		return out, rows.Err()
	}
	queryPairs := func(q string, args ...any) ([]string, error) { return pairsOn(db, q, args...) }
	r.check("stateless_read", func() (string, error) {
		got, err := queryPairs("SELECT seqno, data FROM " + P + "in ORDER BY offset")
		if err != nil {
			return "", err
		}
		var want []string
		for i := 1; i <= 10; i++ {
			want = append(want, fmt.Sprintf("%d:m%d", i, i))
		}
		if err := expectEqual(got, want, "all messages"); err != nil {
			return "", err
		}
		got, err = queryPairs("SELECT offset, data FROM "+P+"in WHERE offset >= $1 ORDER BY offset LIMIT $2", 7, 2)
		if err != nil {
			return "", err
		}
		return "10 rows in order; WHERE/LIMIT parameters", expectEqual(got, []string{"7:m8", "8:m9"}, "offset >= 7 LIMIT 2")
	})
	r.check("array_param", func() (string, error) {
		var n int
		if err := db.QueryRowContext(ctx, "SELECT count(*) FROM "+P+"in WHERE partition = ANY($1) AND offset = ANY($2)", pq.Array([]int64{0, 5}), pq.Array([]int32{0, 1, 2})).Scan(&n); err != nil {
			return "", err
		}
		return "pq.Array parameters with = ANY", expectEqual(n, 3, "count")
	})
	consume := func(q interface {
		QueryContext(context.Context, string, ...any) (*sql.Rows, error)
	}, n int) ([]string, error) {
		return pairsOn(q, "SELECT offset, data FROM "+P+"in WITH (CONSUMER = c) LIMIT $1", n)
	}
	r.check("consumer_read", func() (string, error) {
		a, err := consume(db, 3)
		if err != nil {
			return "", err
		}
		b, err := consume(db, 3)
		if err != nil {
			return "", err
		}
		return "offsets 0-2 then 3-5", firstErr(expectEqual(a, []string{"0:m1", "1:m2", "2:m3"}, "first read"),
			expectEqual(b, []string{"3:m4", "4:m5", "5:m6"}, "second read"))
	})
	r.check("rpw_txn", func() (string, error) {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return "", err
		}
		defer tx.Rollback()
		got, err := consume(tx, 2)
		if err != nil {
			return "", err
		}
		if err := expectEqual(got, []string{"6:m7", "7:m8"}, "read in the transaction"); err != nil {
			return "", err
		}
		for i, g := range got {
			if _, err := tx.ExecContext(ctx, "INSERT INTO "+P+"out (producer_id, seqno, data) VALUES ($1, $2, $3)", "rpw", 6+i, []byte(g)); err != nil {
				return "", err
			}
		}
		if err := tx.Commit(); err != nil {
			return "", err
		}
		out, err := queryPairs("SELECT seqno, data FROM " + P + "out ORDER BY offset")
		if err != nil {
			return "", err
		}
		return "read 6-7, wrote 2, committed", expectEqual(out, []string{"6:6:m7", "7:7:m8"}, "committed output")
	})
	r.check("rollback_rewind", func() (string, error) {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return "", err
		}
		got, err := consume(tx, 2)
		if err != nil {
			tx.Rollback()
			return "", err
		}
		if _, err := tx.ExecContext(ctx, "INSERT INTO "+P+"out (data) VALUES ($1)", "never"); err != nil {
			tx.Rollback()
			return "", err
		}
		if err := tx.Rollback(); err != nil {
			return "", err
		}
		again, err := consume(db, 10)
		if err != nil {
			return "", err
		}
		var n int
		if err := db.QueryRowContext(ctx, "SELECT count(*) FROM "+P+"out").Scan(&n); err != nil {
			return "", err
		}
		return "8-9 read again, nothing written", firstErr(expectEqual(got, []string{"8:m9", "9:m10"}, "read in the transaction"),
			expectEqual(again, got, "read after ROLLBACK"), expectEqual(n, 2, "messages in out"))
	})
	r.check("copy_in", func() (string, error) {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return "", err
		}
		defer tx.Rollback()
		st, err := tx.PrepareContext(ctx, pq.CopyIn(P+"copy", "producer_id", "seqno", "data"))
		if err != nil {
			return "", err
		}
		for _, row := range [][]any{{"cp", 1, []byte("c1")}, {"cp", 2, []byte("c2")}, {"cp", 2, []byte("dup")}} {
			if _, err := st.ExecContext(ctx, row...); err != nil {
				return "", err
			}
		}
		if _, err := st.ExecContext(ctx); err != nil {
			return "", err
		}
		if err := st.Close(); err != nil {
			return "", err
		}
		if err := tx.Commit(); err != nil {
			return "", err
		}
		got, err := queryPairs("SELECT seqno, data FROM " + P + "copy ORDER BY offset")
		if err != nil {
			return "", err
		}
		return "pq.CopyIn in a transaction: 3 rows, duplicate skipped", expectEqual(got, []string{"1:c1", "2:c2"}, "copied rows")
	})
	expectErr := func(code, q string, args ...any) func() (string, error) {
		return func() (string, error) {
			var err error
			if len(args) == 0 {
				_, err = db.ExecContext(ctx, q)
			} else {
				var rows *sql.Rows
				rows, err = db.QueryContext(ctx, q, args...)
				if err == nil {
					for rows.Next() {
					}
					err = rows.Err()
					rows.Close()
				}
			}
			if err == nil {
				return "", mismatch("no error from %s", q)
			}
			if got := pqCode(err); got != code {
				return "", mismatch("SQLSTATE of %s: got %q (%v), want %s", q, got, err, code)
			}
			return code + ", then SELECT 1", select1()
		}
	}
	r.check("error_42601_simple", expectErr("42601", "SELEC 1"))
	r.check("error_42601_extended", expectErr("42601", "SELEC $1", 1))
	r.check("error_42P01_simple", expectErr("42P01", "SELECT * FROM "+P+"missing"))
	r.check("error_42P01_extended", expectErr("42P01", "SELECT * FROM "+P+"missing WHERE offset = $1", 1))
	r.check("error_22012_simple", expectErr("22012", "SELECT 1/0"))
	r.check("error_22012_extended", expectErr("22012", "SELECT 1/$1", 0))
	r.check("error_bad_param", expectErr("22P02", "SELECT offset FROM "+P+"in WHERE seqno = $1", "abc"))
	r.check("error_copy", func() (string, error) {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return "", err
		}
		defer tx.Rollback()
		st, err := tx.PrepareContext(ctx, pq.CopyIn(P+"copy", "producer_id", "seqno", "data"))
		if err != nil {
			return "", err
		}
		_, err1 := st.ExecContext(ctx, "cp", "abc", []byte("bad"))
		_, err2 := st.ExecContext(ctx)
		st.Close()
		tx.Rollback()
		if err := expectEqual(pqCode(errors.Join(err1, err2)), "22P02", fmt.Sprintf("SQLSTATE of the COPY (%v, %v)", err1, err2)); err != nil {
			return "", err
		}
		return "22P02 from a COPY row, then SELECT 1", select1()
	})
	r.check("error_25P02", func() (string, error) {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return "", err
		}
		defer tx.Rollback()
		_, err1 := tx.ExecContext(ctx, "SELECT 1/$1", 0)
		_, err2 := tx.ExecContext(ctx, "SELECT 1")
		if err := firstErr(expectEqual(pqCode(err1), "22012", "first error"), expectEqual(pqCode(err2), "25P02", "statement in the failed transaction")); err != nil {
			return "", err
		}
		if err := tx.Rollback(); err != nil {
			return "", err
		}
		return "22012, 25P02, ROLLBACK, SELECT 1", select1()
	})
	libpqRoles(ctx, r, db, dsn)
}

// libpqRoles is the roles_* checks (drivers_test.go): db is the bootstrap
// connection.
func libpqRoles(ctx context.Context, r *goScenario, db *sql.DB, dsn string) {
	role, topic := r.prefix+"writer", r.prefix+"granted"
	r.check("roles_grant", func() (string, error) {
		for _, q := range roleSetup(role, topic) {
			if _, err := db.ExecContext(ctx, q); err != nil {
				return "", fmt.Errorf("%s: %w", q, err)
			}
		}
		return "CREATE ROLE " + role + " LOGIN PASSWORD, CREATE TOPIC, GRANT INSERT ON TOPIC", nil
	})
	open := func(password string) (*sql.DB, error) {
		rdb, err := sql.Open("postgres", dsnAs(dsn, role, password))
		if err != nil {
			return nil, err
		}
		rdb.SetMaxOpenConns(1)
		if err := rdb.PingContext(ctx); err != nil {
			rdb.Close()
			return nil, err
		}
		return rdb, nil
	}
	var rdb *sql.DB
	r.check("roles_login", func() (string, error) {
		var err error
		if rdb, err = open(rolePassword); err != nil {
			return "", err
		}
		var user string
		if err := rdb.QueryRowContext(ctx, "SELECT current_user").Scan(&user); err != nil {
			return "", err
		}
		return "sql.Open + Ping as the role (SCRAM-SHA-256), current_user " + user, expectEqual(user, role, "current_user")
	})
	if rdb != nil {
		defer rdb.Close()
	}
	noRole := mismatch("no connection as %s (roles_login failed)", role)
	r.check("roles_insert", func() (string, error) {
		if rdb == nil {
			return "", noRole
		}
		res, err := rdb.ExecContext(ctx, "INSERT INTO "+topic+" (data) VALUES ($1)", []byte("by-role"))
		if err != nil {
			return "", err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return "", err
		}
		var data string
		if err := db.QueryRowContext(ctx, "SELECT convert_from(data, 'UTF8') FROM "+topic).Scan(&data); err != nil {
			return "", err
		}
		return "INSERT with a []byte argument counts 1, read back as the bootstrap user",
			firstErr(expectEqual(n, int64(1), "RowsAffected"), expectEqual(data, "by-role", "the message"))
	})
	r.check("roles_denied", func() (string, error) {
		if rdb == nil {
			return "", noRole
		}
		rows, err := rdb.QueryContext(ctx, "SELECT data FROM "+topic+" WHERE offset >= $1", 0)
		if err == nil {
			err = rows.Err()
			rows.Close()
		}
		var pe *pq.Error
		if !errors.As(err, &pe) {
			return "", mismatch("SELECT as the role: got %v, want 42501", err)
		}
		var one int
		if err := rdb.QueryRowContext(ctx, "SELECT 1").Scan(&one); err != nil {
			return "", fmt.Errorf("SELECT 1 after the error: %w", err)
		}
		return "42501 permission denied for topic " + topic + " (*pq.Error), then SELECT 1",
			firstErr(expectEqual(string(pe.Code), "42501", "SQLSTATE"), expectEqual(pe.Message, "permission denied for topic "+topic, "message"))
	})
	r.check("roles_bad_password", func() (string, error) {
		bad, err := open(roleWrongPassword)
		if err == nil {
			bad.Close()
			return "", mismatch("a wrong password logged in")
		}
		return "28P01 (*pq.Error)", expectEqual(pqCode(err), "28P01", fmt.Sprintf("SQLSTATE (%v)", err))
	})
}
