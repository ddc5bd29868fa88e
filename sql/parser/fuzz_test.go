package parser

import (
	"errors"
	"testing"

	"topicgate/sql"
	"topicgate/sql/pgerror"
)

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"SELECT * FROM events WITH (CONSUMER = analytics, WAIT = '5s') LIMIT 10",
		"SELECT partition, offset FROM t WHERE offset >= 10 ORDER BY offset LIMIT 1 OFFSET 2",
		"DELETE FROM jobs WITH (CONSUMER = workers) WHERE partition = $1 AND offset = ANY($2)",
		"INSERT INTO jobs (data, delay) VALUES ('x', Interval('PT10M'))",
		"CREATE TOPIC `a/b` (CONSUMER c WITH (x = 1)) WITH (y = Datetime('2026-01-01T00:00:00Z'))",
		"ALTER TOPIC t ADD CONSUMER a, DROP CONSUMER b, ALTER CONSUMER c RESET (x), SET (y = 'z')",
		"DROP TOPIC IF EXISTS a, b; COPY t (a) FROM STDIN CSV HEADER; BEGIN; COMMIT",
		"SELECT CASE WHEN a THEN b END, x::int8[], E'\\'', $$;$$ /* ; */ -- x",
		"UPDATE t WITH (consumer = c) SET a = DEFAULT RETURNING *",
		"SELECT count(*) FILTER (WHERE a IS NOT UNKNOWN), string_agg(b, ',' ORDER BY c DESC NULLS LAST) FROM t",
		"SELECT attrs @> '{\"k\":1}', attrs ?| ARRAY['a'], '2024-01-01'::date + 1 FROM t",
		"CREATE USER a WITH PASSWORD 'x' VALID UNTIL '2026-01-01' IN ROLE b; ALTER ROLE a RENAME TO c",
		"GRANT SELECT ROW (partition, offset), UPDATE ROW ON TOPIC t, public.u TO PUBLIC WITH GRANT OPTION",
		"REVOKE GRANT OPTION FOR ALL ON CONSUMER t.c, u.d FROM CURRENT_ROLE GRANTED BY b CASCADE",
		"ALTER DEFAULT PRIVILEGES FOR ROLE a IN SCHEMA public GRANT USAGE ON CONSUMERS TO b",
		"GRANT r TO a WITH ADMIN TRUE, INHERIT FALSE; REVOKE SET OPTION FOR r FROM a; ALTER TOPIC t OWNER TO b",
		"GRANT ALL ON ALL TOPICS IN SCHEMA public TO a; REASSIGN OWNED BY a TO b; DROP OWNED BY a CASCADE",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		stmts, err := Parse(q)
		if err != nil {
			var pe *pgerror.Error
			if !errors.As(err, &pe) || len(pe.Code) != 5 {
				t.Fatalf("Parse(%q): error %T %v is not a pgerror with a SQLSTATE", q, err, err)
			}
			if pe.Code == pgerror.CodeInternal {
				t.Fatalf("Parse(%q): internal error %v", q, err)
			}
			return
		}
		for _, s := range stmts {
			if s == nil {
				t.Fatalf("Parse(%q): nil statement", q)
			}
			_ = sql.Format(s)
			_ = sql.NumParams(s)
		}
	})
}
