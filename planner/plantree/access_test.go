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
		require.Equal(t, want, []plantree.Access(plantree.Accesses(plan(t, q))), q)
	}
}
