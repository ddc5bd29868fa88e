package planner

import (
	"testing"

	"github.com/stretchr/testify/require"

	"topicgate/planner/plantree"
	"topicgate/sql/parser"
	"topicgate/sql/values"
	"topicgate/topicstore"
)

type fakeCatalog map[string]topicstore.TopicInfo

func (c fakeCatalog) Topic(name string) (topicstore.TopicInfo, error) {
	t, ok := c[name]
	if !ok {
		return t, topicstore.ErrTopicNotFound
	}
	return t, nil
}

var cat = fakeCatalog{"t": {Config: topicstore.TopicConfig{Name: "t", MinActivePartitions: 4}}}

func plan(t *testing.T, q string, declared ...Type) (plantree.Plan, []Type) {
	t.Helper()
	stmts, err := parser.Parse(q)
	require.NoError(t, err)
	require.Len(t, stmts, 1)
	p, params, err := Build(cat, stmts[0], declared)
	require.NoError(t, err, q)
	return p, params
}

func TestParamInference(t *testing.T) {
	for _, tc := range []struct {
		q    string
		want []Type
	}{
		{"INSERT INTO t (data) VALUES ($1)", []Type{TBytea}},
		{"INSERT INTO t (producer_id, seqno, data) VALUES ($1, $2, $3)", []Type{TText, TInt8, TBytea}},
		{"SELECT data FROM t WHERE partition = $1 AND offset = ANY($2)", []Type{TInt8, TInt8Array}},
		{"SELECT data FROM t WHERE attrs->>'k' = $1 LIMIT $2", []Type{TText, TInt8}},
		{"SELECT data FROM t WHERE written_at >= $1", []Type{TTimestamptz}},
		{"INSERT INTO t (data, delay, attrs) VALUES ($1, $2, $3)", []Type{TBytea, TInterval, TJSONB}},
		{"SELECT $1::int4", []Type{TInt4}},
		{"SELECT $1", []Type{TText}},
	} {
		_, params := plan(t, tc.q)
		require.Equal(t, tc.want, params, tc.q)
	}
	// A declared type wins over inference.
	_, params := plan(t, "INSERT INTO t (data) VALUES ($1)", TText)
	require.Equal(t, []Type{TText}, params)
	// Declared types as drivers send them: pgjdbc's varchar and uuid, an
	// int2[] for = ANY.
	_, params = plan(t, "INSERT INTO t (producer_id, message_group_id, data) VALUES ($1, $2, 'x')",
		values.TypeFromOID(values.OIDVarchar), values.TypeFromOID(values.OIDUUID))
	require.Equal(t, []Type{TText, TText}, params)
	_, params = plan(t, "SELECT data FROM t WHERE offset = ANY($1)", values.TypeFromOID(values.OIDInt2Array))
	require.Equal(t, []Type{TInt8Array}, params)
}

// TestVarcharColumns: PostgreSQL reports varchar and bpchar casts under
// their own OIDs (pgjdbc's getColumnTypeName says varchar), and a bare
// parameter column takes its declared type (Column.Param).
func TestVarcharColumns(t *testing.T) {
	p, _ := plan(t, "SELECT $1::varchar AS a, CAST(producer_id AS character varying(10)) AS b, 'x'::char(3) AS c, $2 AS d, 'e'::text AS e, 1::varchar::int8 AS f FROM t")
	var oids []uint32
	var params []int
	for _, c := range p.Columns() {
		oids = append(oids, c.TypeOID())
		params = append(params, c.Param)
	}
	require.Equal(t, []uint32{values.OIDVarchar, values.OIDVarchar, values.OIDBpchar, values.OIDText, values.OIDText, values.OIDInt8}, oids)
	require.Equal(t, []int{0, 0, 0, 2, 0, 0}, params)
}

func TestPushDown(t *testing.T) {
	p, _ := plan(t, "SELECT data FROM t WHERE partition = 2 AND offset >= 10 AND offset < $1 AND written_at >= now() LIMIT 5")
	s := &scanOf(t, p).Scan
	require.Len(t, s.Partitions, 1)
	require.Equal(t, "2", s.Partitions[0].String())
	require.Len(t, s.Lo, 1)
	require.True(t, s.Lo[0].Inclusive)
	require.Len(t, s.Hi, 1)
	require.False(t, s.Hi[0].Inclusive)
	require.Len(t, s.MinWrittenAt, 1)
	require.True(t, s.NeedData)

	// Flipped comparisons and BETWEEN.
	p, _ = plan(t, "SELECT offset FROM t WHERE 5 < offset AND partition IN (1, 3) AND offset BETWEEN 0 AND 100")
	s = &scanOf(t, p).Scan
	require.Len(t, s.Partitions, 2)
	require.Len(t, s.Lo, 2)
	require.False(t, s.Lo[0].Inclusive)
	require.False(t, s.NeedData, "data is not read, so bodies are not decoded")

	// OR is not pushed (the filter still applies).
	p, _ = plan(t, "SELECT offset FROM t WHERE partition = 1 OR offset > 3")
	s = &scanOf(t, p).Scan
	require.Nil(t, s.Partitions)
	require.Nil(t, s.Lo)

	// ORDER BY partition, offset is the scan's order: no sort.
	p, _ = plan(t, "SELECT offset FROM t ORDER BY partition, offset")
	require.False(t, sorts(p), "rule scanOrder drops the sort")
	// Other orders by partition and offset are scan orders too (rule
	// scanOrder); anything else still sorts.
	for q, want := range map[string]plantree.ScanOrder{
		"SELECT offset FROM t ORDER BY offset DESC":               {Merge: true, OffsetDesc: true},
		"SELECT offset FROM t ORDER BY offset":                    {Merge: true},
		"SELECT data FROM t ORDER BY partition DESC":              {PartDesc: true},
		"SELECT data FROM t ORDER BY partition, offset DESC":      {OffsetDesc: true},
		"SELECT data FROM t ORDER BY 1 DESC, offset DESC LIMIT 3": {},
		"SELECT partition, offset FROM t ORDER BY 1 DESC, 2 DESC": {PartDesc: true, OffsetDesc: true},
	} {
		p, _ = plan(t, q)
		if q == "SELECT data FROM t ORDER BY 1 DESC, offset DESC LIMIT 3" {
			require.True(t, sorts(p), q) // by data: a real sort
			continue
		}
		require.False(t, sorts(p), q)
		require.Equal(t, want, scanOf(t, p).Scan.Order, q)
	}
	p, _ = plan(t, "SELECT offset FROM t ORDER BY written_at DESC")
	require.True(t, sorts(p))
}

// nodes lists a plan's tree, depth first.
func nodes(n plantree.Node) []plantree.Node {
	out := []plantree.Node{n}
	for _, c := range n.Children() {
		out = append(out, nodes(c)...)
	}
	return out
}

// scanOf is the topic scan of a query's tree.
func scanOf(t *testing.T, p plantree.Plan) *plantree.ScanNode {
	for _, n := range nodes(plantree.Tree(p.(*plantree.SelectPlan))) {
		if s, ok := n.(*plantree.ScanNode); ok {
			return s
		}
	}
	t.Fatal("no scan in the plan")
	return nil
}

// sorts reports whether a query's tree sorts.
func sorts(p plantree.Plan) bool {
	for _, n := range nodes(plantree.Tree(p.(*plantree.SelectPlan))) {
		switch n.(type) {
		case *plantree.SortNode, *plantree.TopNNode:
			return true
		}
	}
	return false
}

func TestPlanErrors(t *testing.T) {
	for q, code := range map[string]string{
		"SELECT nosuch FROM t":                               "42703",
		"SELECT * FROM nosuch":                               "42P01",
		"INSERT INTO t (offset, data) VALUES (1, 'x')":       "428C9",
		"INSERT INTO t (producer_id) VALUES ('p')":           "23502",
		"INSERT INTO t (data, data) VALUES ('a', 'b')":       "42701",
		"SELECT data + 1 FROM t":                             "42883",
		"SELECT partition, count(*) FROM t":                  "42803",
		"CREATE TOPIC x WITH (nosuch = 1)":                   "22023",
		"CREATE TOPIC x WITH (retention_period = 'forever')": "22023",
		"SELECT 'abc'::int8":                                 "22P02",
		"SELECT * FROM sys.nosuch":                           "42P01",
	} {
		stmts, err := parser.Parse(q)
		require.NoError(t, err, q)
		_, _, err = Build(cat, stmts[0], nil)
		require.Error(t, err, q)
		require.Equal(t, code, errCode(err), "%s: %v", q, err)
	}
}

func errCode(err error) string {
	if s, ok := err.(interface{ SQLState() string }); ok {
		return s.SQLState()
	}
	return ""
}
