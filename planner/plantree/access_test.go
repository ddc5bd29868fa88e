package plantree_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"topicgate/planner/plantree"
	"topicgate/topicstore"
)

// TestAccesses: what each kind of statement does to topics, through
// every place a query can read one (joins, subqueries, CTEs, set
// operations, INSERT ... SELECT, COPY, cursors, EXPLAIN).
func TestAccesses(t *testing.T) {
	cat["u"] = topicstore.TopicInfo{Config: topicstore.TopicConfig{Name: "u", MinActivePartitions: 1}}
	defer delete(cat, "u")
	read := func(topic string) plantree.Access { return plantree.Access{Topic: topic, Read: true} }
	for q, want := range map[string][]plantree.Access{
		"SELECT 1":        nil,
		"SELECT * FROM t": {read("t")},
		"SELECT * FROM t JOIN u ON t.offset = u.offset":                        {read("t"), read("u")},
		"SELECT (SELECT count(*) FROM u) FROM t":                               {read("t"), read("u")},
		"SELECT 1 WHERE EXISTS (SELECT 1 FROM u)":                              {read("u")},
		"WITH x AS (SELECT * FROM u) SELECT * FROM x":                          {read("u")},
		"SELECT offset FROM t UNION SELECT offset FROM u":                      {read("t"), read("u")},
		"INSERT INTO t (data) VALUES ('x')":                                    {{Topic: "t", Insert: true}},
		"INSERT INTO t (data) SELECT data FROM t":                              {{Topic: "t", Read: true, Insert: true}},
		"INSERT INTO t (data) SELECT data FROM u":                              {{Topic: "t", Insert: true}, read("u")},
		"COPY t (data) FROM STDIN":                                             {{Topic: "t", Insert: true}},
		"COPY (SELECT * FROM u) TO STDOUT":                                     {read("u")},
		"COPY u TO STDOUT":                                                     {read("u")},
		"DECLARE k CURSOR FOR SELECT * FROM u":                                 {read("u")},
		"EXPLAIN SELECT * FROM u":                                              {read("u")},
		"SELECT * FROM t WITH (CONSUMER = c)":                                  {read("t"), {Topic: "t", Consumer: "c"}},
		"DELETE FROM t WITH (CONSUMER = q) WHERE partition = 0 AND offset = 1": {{Topic: "t", Consumer: "q"}},
	} {
		got := plantree.Accesses(plan(t, q))
		for i := range got {
			got[i].ReadCols, got[i].InsertCols = 0, 0 // TestAccessColumns
		}
		require.Equal(t, want, []plantree.Access(got), q)
	}
}

// TestAccessColumns: the columns a statement names, wherever it names
// them (the select list, WHERE, ORDER BY, a correlated subquery, *), and
// the columns an INSERT or COPY writes.
func TestAccessColumns(t *testing.T) {
	names := func(bits uint64) []string {
		var out []string
		for c := range plantree.MsgColumns {
			if bits&(1<<uint(c)) != 0 {
				out = append(out, plantree.MsgColumns[c].Name)
			}
		}
		return out
	}
	for q, want := range map[string][]string{
		"SELECT count(*) FROM t": nil,
		"SELECT partition, \"offset\" FROM t WHERE written_at > now()": {"partition", "offset", "written_at"},
		"SELECT data FROM t ORDER BY producer_id":                      {"producer_id", "data"},
		"SELECT 1 FROM t WHERE EXISTS (SELECT 1 WHERE t.seqno > 0)":    {"seqno"},
		"INSERT INTO t (data, producer_id) VALUES ('x', 'p')":          {"producer_id", "data"},
		"COPY t (data) FROM STDIN":                                     {"data"},
	} {
		a := plantree.Accesses(plan(t, q))
		require.Len(t, a, 1, q)
		require.Equal(t, want, names(a[0].ReadCols|a[0].InsertCols), q)
	}
	star := plantree.Accesses(plan(t, "SELECT * FROM t"))[0].ReadCols
	for _, c := range plantree.StarColumns {
		require.NotZero(t, star&(1<<uint(c)), plantree.MsgColumns[c].Name)
	}
}
