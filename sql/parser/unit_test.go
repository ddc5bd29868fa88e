package parser

import (
	"errors"
	"sync"
	"testing"
	"time"

	"topicgate/sql"
	"topicgate/sql/pgerror"
)

func mustParse1(t *testing.T, q string) sql.Stmt {
	t.Helper()
	stmts, err := Parse(q)
	if err != nil {
		t.Fatalf("Parse(%q): %v", q, err)
	}
	if len(stmts) != 1 {
		t.Fatalf("Parse(%q): %d statements", q, len(stmts))
	}
	return stmts[0]
}

func TestEmpty(t *testing.T) {
	for _, q := range []string{"", "  ", "-- c", "/* c */", ";", " ; ;"} {
		if _, ok := mustParse1(t, q).(*sql.Empty); !ok {
			t.Errorf("Parse(%q) is not *Empty", q)
		}
	}
}

func TestTypedAST(t *testing.T) {
	s := mustParse1(t, "SELECT data FROM events WITH (CONSUMER = analytics, WAIT = '5s') LIMIT 10").(*sql.Select)
	if s.From == nil || s.From.Name != "events" || s.From.Pos != 18 || len(s.From.Hints) != 2 {
		t.Fatalf("bad From: %+v", s.From)
	}
	h := s.From.Hints[0]
	if h.Name != "consumer" || h.Value.Kind != sql.LitIdent || h.Value.Str != "analytics" || h.Pos != 31 {
		t.Errorf("bad hint: %+v", h)
	}
	if l, ok := s.Limit.(*sql.Const); !ok || l.Lit.Kind != sql.LitInt || l.Lit.Int != 10 {
		t.Errorf("bad limit: %#v", s.Limit)
	}

	ins := mustParse1(t, "INSERT INTO jobs (data, delay) VALUES ('x', Interval('PT10M'))").(*sql.Insert)
	if c, ok := ins.Values[0][1].(*sql.Const); !ok || c.Lit.Kind != sql.LitInterval || c.Lit.Dur != 10*time.Minute {
		t.Errorf("bad interval: %#v", ins.Values[0][1])
	}

	ct := mustParse1(t, "CREATE TOPIC t (CONSUMER c WITH (read_from = Datetime('2026-01-01T00:00:00Z')))").(*sql.CreateTopic)
	want := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if v := ct.Consumers[0].Options[0].Value; v.Kind != sql.LitTime || !v.Time.Equal(want) {
		t.Errorf("bad time: %+v", v)
	}
	if ct.Consumers[0].Pos != 26 {
		t.Errorf("consumer pos %d", ct.Consumers[0].Pos)
	}
}

func TestNumParams(t *testing.T) {
	cases := map[string]int{
		"SELECT 1":      0,
		"SELECT $1, $3": 3,
		"SELECT * FROM t WITH (max_bytes = $4) LIMIT $2":          4,
		"CREATE TOPIC t (CONSUMER c WITH (x = $5)) WITH (y = $2)": 5,
		"ALTER TOPIC t ALTER CONSUMER c SET (x = $7)":             7,
		"EXPLAIN DELETE FROM t WHERE offset = ANY($2)":            2,
		"INSERT INTO t (a) SELECT $9 FROM u WHERE x IN ($1)":      9,
		"UPDATE t SET a = CASE WHEN $1 THEN COALESCE($6, 1) END":  6,
	}
	for q, want := range cases {
		if got := sql.NumParams(mustParse1(t, q)); got != want {
			t.Errorf("NumParams(%q) = %d, want %d", q, got, want)
		}
	}
}

func TestErrorsArePgErrors(t *testing.T) {
	cases := map[string]struct {
		code string
		pos  int
	}{
		"SELECT 'x":                           {"42601", 8},
		"SELECT * FROM a FULL JOIN b ON true": {"0A000", 0},
		"CREATE TABLE t (a int)":              {"0A000", 0},
		"SELECT ü FROM t WHERE (":             {"42601", 24},
		"SELECT ü, Interval('nope')":          {"22007", 20},
		"CREATE TOPIC t WITH (a=1, a=2)":      {"42601", 27},
	}
	for q, want := range cases {
		_, err := Parse(q)
		var pe *pgerror.Error
		if !errors.As(err, &pe) {
			t.Errorf("Parse(%q): %T %v", q, err, err)
			continue
		}
		if pe.Code != want.code || pe.Position != want.pos {
			t.Errorf("Parse(%q): code %s pos %d (%s), want %s %d", q, pe.Code, pe.Position, pe.Message, want.code, want.pos)
		}
	}
}

func TestParseInterval(t *testing.T) {
	cases := map[string]time.Duration{
		"PT30S": 30 * time.Second, "P2D": 48 * time.Hour, "PT1H30M": 90 * time.Minute,
		"P1W": 7 * 24 * time.Hour, "PT0.5S": 500 * time.Millisecond, "-PT1M": -time.Minute,
		"P1M": 30 * 24 * time.Hour, "P1DT1S": 24*time.Hour + time.Second,
		"30 seconds": 30 * time.Second, "1 hour 30 minutes": 90 * time.Minute, "2 days": 48 * time.Hour,
		"00:05:00": 5 * time.Minute, "1 day 02:00:00": 26 * time.Hour, "5s": 5 * time.Second,
		"1h30m": 90 * time.Minute, "10": 10 * time.Second, "1 day ago": -24 * time.Hour, "3 mins": 3 * time.Minute,
	}
	for in, want := range cases {
		got, err := ParseInterval(in)
		if err != nil || got != want {
			t.Errorf("ParseInterval(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "P", "PT", "PT1D", "P1H", "PT1X", "1 fortnight", "abc", "P1.2.3D", "::"} {
		if d, err := ParseInterval(in); err == nil {
			t.Errorf("ParseInterval(%q) = %v, want error", in, d)
		}
	}
}

func TestParseTime(t *testing.T) {
	want := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	for _, in := range []string{"2026-01-01T12:00:00Z", "2026-01-01 12:00:00", "2026-01-01T14:00:00+02:00", "2026-01-01 12:00:00+00"} {
		got, err := ParseTime(in)
		if err != nil || !got.Equal(want) {
			t.Errorf("ParseTime(%q) = %v, %v", in, got, err)
		}
	}
}

func TestConcurrentParse(t *testing.T) {
	qs := []string{
		"SELECT partition, offset FROM t WITH (CONSUMER = c) WHERE offset > $1 LIMIT 10",
		"CREATE TOPIC t (CONSUMER a) WITH (retention_period = Interval('PT1H'))",
		"INSERT INTO t (data) VALUES ('x'), ('y')",
	}
	want := make([]string, len(qs))
	for i, q := range qs {
		want[i] = sql.Format(mustParse1(t, q))
	}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				k := i % len(qs)
				s, err := Parse(qs[k])
				if err != nil || sql.Format(s[0]) != want[k] {
					t.Errorf("concurrent parse of %q: %v", qs[k], err)
					return
				}
			}
		}()
	}
	wg.Wait()
}
