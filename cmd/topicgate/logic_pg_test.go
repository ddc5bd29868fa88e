package main

// TestLogicAgainstPostgres checks the logic tests' expected answers against
// a real PostgreSQL 15: every record of testdata/*.test that does not
// depend on topics runs there, in order, and PostgreSQL must give the
// file's rows (rendered by the same code as TestLogic, in text format) or
// the file's error SQLSTATE (not its message, whose wording is
// topicgate's). TestLogic checks the same records against topicgate, so
// the two together hold topicgate to PostgreSQL's answers.
//
// What is compared. A record runs on PostgreSQL unless one of these rules
// holds; the rules look at the SQL (parsed with pg_query, PostgreSQL's own
// parser), never at whether PostgreSQL fails:
//
//   - topic DDL: CREATE TOPIC, ALTER TOPIC or DROP TOPIC anywhere in it;
//   - it reads a topic: a relation it names (FROM, JOIN, INSERT INTO,
//     UPDATE, DELETE, DECLARE ... FOR ...) is a topic some CREATE TOPIC of
//     the file makes, and not a WITH query of the same name;
//   - it reads a sys.* view (sys.topics, sys.consumers, ...);
//   - it names a topic (or sys view) in a string while reading the
//     catalog or casting to regclass ('orders'::regclass, relname = 'orders');
//   - topicgate's own syntax: PostgreSQL's parser rejects the SQL but
//     topicgate's accepts it (read hints such as WITH (CONSUMER = c),
//     UPDATE/DELETE ... WITH (CONSUMER = c), the column named offset), or
//     it has a YQL literal (Interval('PT1M'), Datetime('...'),
//     Timestamp('...')); SQL both parsers reject is compared (mostly
//     42601) unless a word of it is a topic of the file;
//   - EXPLAIN: its output is topicgate's plan, not PostgreSQL's;
//   - FETCH, MOVE or CLOSE of a cursor whose DECLARE did not run here.
//
// Records that set up state (SET, BEGIN, SAVEPOINT, DECLARE, CREATE TABLE
// in PostgreSQL) run like the others, on one PostgreSQL session per named
// connection of the file ("connection name"), with "mode extended" sending
// them with the extended protocol, as TestLogic does; each file has a
// database of its own. A record that does not run but fails (in the file)
// inside a transaction block fails PostgreSQL's block too, so that the
// records after it see the same aborted block.
//
// Annotations. A comment line in the comments before a record (the
// runners keep them, and -rewrite preserves them) makes a case explicit:
//
//	# pg: skip <reason>     the record does not run on PostgreSQL
//	# pg: differs <reason>  it runs (for the state it sets up), and
//	                        PostgreSQL's answer must differ from the file's:
//	                        a deliberate difference, checked so that the
//	                        annotation goes once topicgate agrees
//	# pg: skip-file <reason>  (before the first record) no record of the
//	                        file runs on PostgreSQL
//
// A reason is required. Each test logs per file how many records were
// compared, how many differ by annotation and how many were skipped by
// which rule; the total compared must stay above minPGCompared.
//
// PostgreSQL must be installed (pgtest.PGBin): without it the test skips,
// with it a PostgreSQL that does not start fails the test.

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	pg "github.com/pganalyze/pg_query_go/v5"
	"google.golang.org/protobuf/reflect/protoreflect"

	tgsql "topicgate/sql"
	tgparser "topicgate/sql/parser"
	"topicgate/wire/pgtest"
)

// minPGCompared is a floor under the number of records compared over all
// files, so that a rule grown too wide cannot make the test pass by
// comparing nothing.
const minPGCompared = 630

// pgRecordTimeout bounds one record on PostgreSQL; every record takes
// milliseconds.
const pgRecordTimeout = 30 * time.Second

// pgCounts is what one file's run did.
type pgCounts struct {
	compared int
	differs  int            // run, with an annotated difference
	aborted  int            // blocks failed for a record not run (abortBlock)
	skipped  map[string]int // by rule
}

func (c pgCounts) skippedTotal() int {
	n := 0
	for _, v := range c.skipped {
		n += v
	}
	return n
}

func (c pgCounts) String() string {
	var reasons []string
	for r, n := range c.skipped {
		reasons = append(reasons, fmt.Sprintf("%s %d", r, n))
	}
	sort.Strings(reasons)
	return fmt.Sprintf("compared %d, annotated differences %d, skipped %d (%s), blocks failed for a skipped record %d",
		c.compared, c.differs, c.skippedTotal(), strings.Join(reasons, ", "), c.aborted)
}

func TestLogicAgainstPostgres(t *testing.T) {
	start := time.Now()
	target := pgtest.StartPostgres(t)
	t.Logf("PostgreSQL 15 started in %v", time.Since(start).Round(time.Millisecond))
	files, err := filepath.Glob("../../testdata/*.test")
	if err != nil || len(files) == 0 {
		t.Fatalf("no logic test files: %v", err)
	}
	dbs := createLogicDatabases(t, target.Addr, files)
	var total pgCounts
	total.skipped = map[string]int{}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".test")
		db := dbs[f]
		t.Run(name, func(t *testing.T) {
			c := runLogicFileOnPostgres(t, f, fmt.Sprintf("postgres://postgres@%s/%s?sslmode=disable", target.Addr, db))
			t.Logf("%s: %v", name, c)
			total.compared += c.compared
			total.differs += c.differs
			total.aborted += c.aborted
			for r, n := range c.skipped {
				total.skipped[r] += n
			}
		})
	}
	t.Logf("all files: %v; %v", total, time.Since(start).Round(time.Millisecond))
	if total.compared < minPGCompared {
		t.Errorf("only %d records compared with PostgreSQL, expected at least %d", total.compared, minPGCompared)
	}
}

// createLogicDatabases makes a database for each file, as the logic
// runner starts a fresh server for each, and returns their names. They are
// created a few at a time: CREATE DATABASE takes PostgreSQL most of the
// time this test runs.
func createLogicDatabases(t *testing.T, addr string, files []string) map[string]string {
	ctx := context.Background()
	dbs := map[string]string{}
	todo := make(chan string, len(files))
	for _, f := range files {
		dbs[f] = "logic_" + strings.TrimSuffix(filepath.Base(f), ".test")
		todo <- dbs[f]
	}
	close(todo)
	var wg sync.WaitGroup
	errs := make(chan error, len(files))
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			admin, err := pgconn.Connect(ctx, fmt.Sprintf("postgres://postgres@%s/postgres?sslmode=disable", addr))
			if err != nil {
				errs <- err
				return
			}
			defer admin.Close(ctx)
			for db := range todo {
				// LC_CTYPE C.UTF-8: topicgate folds case by Unicode ('É'
				// ILIKE 'é', upper('é')), as PostgreSQL does under a UTF-8
				// LC_CTYPE; LC_COLLATE stays C, the code point order
				// topicgate sorts in. temp_file_limit: a query that would
				// spill without end (one topicgate stops at its memory
				// limit) fails instead of filling the disk; jit off:
				// compiling asyncpg's introspection query takes PostgreSQL
				// seconds. No record reads either setting.
				for _, q := range []string{
					"CREATE DATABASE %q TEMPLATE template0 LC_COLLATE 'C' LC_CTYPE 'C.UTF-8'",
					"ALTER DATABASE %q SET temp_file_limit = '256MB'",
					"ALTER DATABASE %q SET jit = off",
				} {
					if _, err := admin.Exec(ctx, fmt.Sprintf(q, db)).ReadAll(); err != nil {
						errs <- fmt.Errorf("%s: %w", fmt.Sprintf(q, db), err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	return dbs
}

// pgFileSkip returns the reason of a "# pg: skip-file <reason>" line in
// the comments before the file's first record, or "".
func pgFileSkip(t *testing.T, path string, first logicRecord) string {
	for _, c := range first.comments {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(c), "# pg: skip-file"); ok {
			if strings.TrimSpace(rest) == "" {
				t.Fatalf("%s: \"pg: skip-file\" without a reason", path)
			}
			return strings.TrimSpace(rest)
		}
	}
	return ""
}

// pgDirective is a record's "# pg:" annotation.
type pgDirective struct {
	kind   string // "", "skip" or "differs"
	reason string
}

func parsePGDirective(t *testing.T, path string, rec logicRecord) pgDirective {
	var d pgDirective
	for _, c := range rec.comments {
		rest, ok := strings.CutPrefix(strings.TrimSpace(c), "# pg:")
		if !ok {
			continue
		}
		kind, reason, _ := strings.Cut(strings.TrimSpace(rest), " ")
		reason = strings.TrimSpace(reason)
		if kind == "skip-file" { // the first record's are read by pgFileSkip
			t.Fatalf("%s:%d: \"pg: skip-file\" belongs in the comments before the first record", path, rec.line)
		}
		if kind != "skip" && kind != "differs" {
			t.Fatalf("%s:%d: unknown annotation %q (want # pg: skip|differs <reason>)", path, rec.line, c)
		}
		if reason == "" {
			t.Fatalf("%s:%d: annotation %q without a reason", path, rec.line, c)
		}
		if d.kind != "" {
			t.Fatalf("%s:%d: two pg annotations", path, rec.line)
		}
		d = pgDirective{kind, reason}
	}
	return d
}

func runLogicFileOnPostgres(t *testing.T, path, dsn string) pgCounts {
	ctx := context.Background()
	recs := parseLogicFile(t, path)
	cls := newPGClassifier(recs)
	counts := pgCounts{skipped: map[string]int{}}
	if len(recs) > 0 {
		if why := pgFileSkip(t, path, recs[0]); why != "" {
			for _, rec := range recs {
				if rec.kind == "statement" || rec.kind == "query" {
					counts.skipped["file annotated"]++
				}
			}
			t.Logf("%s: not run on PostgreSQL: %s", path, why)
			return counts
		}
	}
	connect := logicConnector(t, dsn)
	cur := connect("default")
	extended := false
	for _, rec := range recs {
		switch rec.kind {
		case "connection":
			cur = connect(rec.arg)
			continue
		case "user":
			cur = connect("user " + rec.arg)
			continue
		case "mode":
			extended = rec.arg == "extended"
			continue
		}
		d := parsePGDirective(t, path, rec)
		why := cls.topicDependence(rec.sql)
		if d.kind != "" && why != "" {
			t.Errorf("%s:%d: annotated \"pg: %s\", but the rules skip it already (%s): remove the annotation", path, rec.line, d.kind, why)
		}
		if d.kind == "skip" {
			why = "annotated"
		}
		if why != "" {
			counts.skipped[why]++
			cls.notSent(rec.sql)
			if strings.HasPrefix(rec.arg, "error ") && cur.c.TxStatus() == 'T' {
				// It failed in topicgate's transaction block, which now
				// ignores commands until ROLLBACK: so must PostgreSQL's.
				abortBlock(t, ctx, cur, path, rec)
				counts.aborted++
			}
			continue
		}
		colnames := rec.kind == "query" && rec.arg == "colnames"
		rctx, cancel := context.WithTimeout(ctx, pgRecordTimeout)
		began := time.Now()
		rows, err := cur.run(rctx, rec.sql, extended, colnames)
		cancel()
		if d := time.Since(began); d > time.Second {
			t.Logf("%s:%d: slow on PostgreSQL: %v", path, rec.line, d.Round(time.Millisecond))
		}
		var pgErr *pgconn.PgError
		if err != nil && !errors.As(err, &pgErr) {
			t.Fatalf("%s:%d: %v", path, rec.line, err)
		}
		want, got, same := pgCompare(rec, rows, pgErr)
		switch {
		case d.kind == "differs" && same:
			t.Errorf("%s:%d: annotated \"pg: differs\" (%s), but PostgreSQL agrees: remove the annotation\n%s", path, rec.line, d.reason, rec.sql)
		case d.kind == "differs":
			counts.differs++
		case !same:
			t.Errorf("%s:%d: PostgreSQL 15 disagrees\n%s\nfile:\n%s\nPostgreSQL:\n%s", path, rec.line, rec.sql, want, got)
		default:
			counts.compared++
		}
	}
	return counts
}

// abortBlock fails the transaction block of lc, as a record that did not
// run on PostgreSQL failed topicgate's.
func abortBlock(t *testing.T, ctx context.Context, lc *logicConn, path string, rec logicRecord) {
	_, err := lc.run(ctx, "DO $$BEGIN RAISE EXCEPTION 'a record not run here failed in topicgate'; END$$", false, false)
	if err == nil || lc.c.TxStatus() != 'E' {
		t.Fatalf("%s:%d: could not fail the transaction block as the record failed topicgate's: %v", path, rec.line, err)
	}
}

// pgCompare renders the file's expectation and PostgreSQL's answer, and
// whether they agree: the same rows, or the same error SQLSTATE.
func pgCompare(rec logicRecord, rows []string, pgErr *pgconn.PgError) (want, got string, same bool) {
	got = "ok"
	if pgErr != nil {
		got = "error " + pgErr.Code + " " + pgErr.Message
	} else if rec.kind == "query" {
		got = strings.Join(rows, "\n")
	}
	if rec.kind == "query" {
		want = strings.Join(rec.expected, "\n")
		return want, got, pgErr == nil && got == want
	}
	want = rec.arg
	if want == "ok" {
		return want, got, pgErr == nil
	}
	code, _, _ := strings.Cut(strings.TrimPrefix(want, "error "), " ")
	return want, got, pgErr != nil && pgErr.Code == code
}

var (
	reTopicDDL    = regexp.MustCompile(`(?i)\b(create|alter|drop)\s+topic\b`)
	reYQLLiteral  = regexp.MustCompile(`(?i)\b(interval|datetime|timestamp)\s*\(\s*'`)
	reWord        = regexp.MustCompile("\"(?:[^\"]|\"\")+\"|`[^`]+`|[A-Za-z_][A-Za-z0-9_$]*")
	reDeclareName = regexp.MustCompile(`(?i)^\s*declare\s+("(?:[^"]|"")+"|[a-z_][a-z0-9_$]*)`)
)

// pgClassifier applies the rules of the comment at the top of this file
// to one file's records.
type pgClassifier struct {
	topics  map[string]bool // the names the file's CREATE TOPIC statements make
	cursors map[string]bool // cursors whose DECLARE did not run on PostgreSQL
}

func newPGClassifier(recs []logicRecord) *pgClassifier {
	c := &pgClassifier{topics: map[string]bool{}, cursors: map[string]bool{}}
	for _, rec := range recs {
		if !reTopicDDL.MatchString(rec.sql) {
			continue
		}
		stmts, err := tgparser.Parse(rec.sql)
		if err != nil {
			continue
		}
		for _, s := range stmts {
			if ct, ok := s.(*tgsql.CreateTopic); ok {
				c.topics[ct.Name] = true
			}
		}
	}
	return c
}

// notSent notes a record that did not run on PostgreSQL: a cursor it
// declares does not exist there.
func (c *pgClassifier) notSent(query string) {
	if m := reDeclareName.FindStringSubmatch(query); m != nil {
		name := m[1]
		if strings.HasPrefix(name, `"`) {
			name = strings.ReplaceAll(name[1:len(name)-1], `""`, `"`)
		} else {
			name = strings.ToLower(name)
		}
		c.cursors[name] = true
	}
}

// topicDependence returns the rule that keeps query from PostgreSQL, or "".
func (c *pgClassifier) topicDependence(query string) string {
	if reTopicDDL.MatchString(query) {
		return "topic DDL"
	}
	if reYQLLiteral.MatchString(query) {
		return "topicgate syntax"
	}
	tree, err := pg.Parse(query)
	if err != nil {
		if _, err := tgparser.Parse(query); err == nil {
			return "topicgate syntax"
		}
		// Both parsers reject it (PostgreSQL's grammar raises some
		// errors other than 42601 itself, such as a frame starting at
		// UNBOUNDED FOLLOWING); a topic's name still marks it.
		for _, w := range reWord.FindAllString(query, -1) {
			if c.topics[strings.Trim(w, "\"`")] || c.topics[strings.ToLower(w)] {
				return "reads a topic"
			}
		}
		return ""
	}
	ctes := map[string]bool{}
	var rels []*pg.RangeVar
	var strs []string
	var explain, regclass bool
	var portals []string
	walkPGTree(tree.ProtoReflect(), func(m protoreflect.Message) {
		switch x := m.Interface().(type) {
		case *pg.ExplainStmt:
			explain = true
		case *pg.CommonTableExpr:
			ctes[x.Ctename] = true
		case *pg.RangeVar:
			rels = append(rels, x)
		case *pg.A_Const:
			if s := x.GetSval(); s != nil {
				strs = append(strs, s.Sval)
			}
		case *pg.TypeCast:
			if n := x.GetTypeName().GetNames(); len(n) > 0 && n[len(n)-1].GetString_().GetSval() == "regclass" {
				regclass = true
			}
		case *pg.FetchStmt:
			portals = append(portals, x.Portalname)
		case *pg.ClosePortalStmt:
			portals = append(portals, x.Portalname)
		}
	})
	if explain {
		return "EXPLAIN"
	}
	catalog := regclass
	for _, r := range rels {
		switch {
		case r.Schemaname == "sys":
			return "sys view"
		case (r.Schemaname == "" || r.Schemaname == "public") && c.topics[r.Relname] && !ctes[r.Relname]:
			return "reads a topic"
		case r.Schemaname == "pg_catalog" || r.Schemaname == "information_schema" || strings.HasPrefix(r.Relname, "pg_"):
			catalog = true
		}
	}
	if catalog {
		for _, s := range strs {
			if c.topics[s] || c.topics[strings.TrimPrefix(s, "public.")] || strings.HasPrefix(s, "sys.") {
				return "names a topic in a string"
			}
		}
	}
	for _, p := range portals {
		if c.cursors[p] {
			return "cursor over a topic"
		}
	}
	return ""
}

// walkPGTree calls f for m and every message under it.
func walkPGTree(m protoreflect.Message, f func(protoreflect.Message)) {
	f(m)
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsMap() || fd.Message() == nil:
		case fd.IsList():
			l := v.List()
			for i := 0; i < l.Len(); i++ {
				walkPGTree(l.Get(i).Message(), f)
			}
		default:
			walkPGTree(v.Message(), f)
		}
		return true
	})
}
