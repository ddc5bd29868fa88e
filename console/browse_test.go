package console

import (
	"net/url"
	"strings"
	"testing"
)

// TestFilterParams: every filter value but the WHERE expression reaches
// the statement as a bind parameter, never in its text.
func TestFilterParams(t *testing.T) {
	const evil = `x' OR true --`
	q := url.Values{"topic": {"t"}, "since": {evil}, "producer": {evil}, "group": {evil}, "attr": {evil}, "attrval": {evil},
		"key": {evil}, "hdr": {evil}, "hdrval": {evil}, "text": {evil}}
	b, err := parseBrowse(q)
	if err != nil {
		t.Fatal(err)
	}
	sql, args := selectSQL(b.Topic, msgCols, 0, 10, 20, b.F, true, 5)
	if strings.Contains(sql, "OR true") {
		t.Fatalf("a value in the statement's text: %s", sql)
	}
	if len(args) != 3+7 { // an attribute and a header are one parameter each
		t.Fatalf("%d parameters, want 10: %v", len(args), args)
	}
	if !strings.Contains(sql, `ORDER BY "offset" DESC LIMIT 5`) || !strings.Contains(sql, `"offset" >= $2 AND "offset" < $3`) {
		t.Fatalf("unbounded: %s", sql)
	}
	// The expression filters a subquery that holds the bounds, ending on
	// a line of its own (a trailing -- comment ends there).
	b.F = filters{Where: `true) OR (true -- `}
	sql, _ = selectSQL("t", msgCols, 0, 10, 20, b.F, false, 0)
	want := `FROM (SELECT ` + allCols + ` FROM "t" WHERE partition = $1 AND "offset" >= $2 AND "offset" < $3) AS m WHERE (true) OR (true -- ` + "\n)"
	if !strings.Contains(sql, want) {
		t.Fatalf("got %s\nwant it to contain %s", sql, want)
	}
	for _, bad := range []url.Values{{"topic": {"t"}, "attrval": {"v"}}, {"topic": {"t"}, "hdrval": {"v"}}, {"topic": {"t"}, "scan": {"100001"}}} {
		if _, err := parseBrowse(bad); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
}

func TestExportBytes(t *testing.T) {
	for in, want := range map[string]string{
		"plain":         "plain",
		"":              "",
		"\x00a":         `\x0061`,
		"\xff":          `\xff`,
		`\xnot hex`:     `\x5c786e6f7420686578`,
		"é, \"quoted\"": "é, \"quoted\"",
	} {
		if got := exportBytes([]byte(in)); got != want {
			t.Errorf("exportBytes(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestPartitionTree: children under their parent, depth first, in a
// topic that split twice.
func TestPartitionTree(t *testing.T) {
	row := func(id int64, parent any, children []int64) []any {
		return []any{id, "active", int64(0), int64(0), int64(0), int64(0), nil, parent, children, nil, nil, 0.0, 0.0, 0.0}
	}
	p := &result{Rows: [][]any{
		row(0, nil, []int64{2, 3}), row(1, nil, nil), row(2, int64(0), []int64{4, 5}), row(3, int64(0), nil),
		row(4, int64(2), nil), row(5, int64(2), nil),
	}}
	var got []string
	for _, n := range partitionTree(p) {
		got = append(got, n.ID+"@"+strings.Repeat(">", n.Depth))
	}
	if want := "0@ 2@> 4@>> 5@>> 3@> 1@"; strings.Join(got, " ") != want {
		t.Fatalf("tree %q, want %q", strings.Join(got, " "), want)
	}
}
