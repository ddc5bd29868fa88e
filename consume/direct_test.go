package consume

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"topicgate/planner"
	"topicgate/planner/plantree"
	"topicgate/sql/parser"
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

// consumerRead plans q and returns its consumer read node.
func consumerRead(t *testing.T, q string) *plantree.ConsumerReadNode {
	t.Helper()
	cat := fakeCatalog{"t": {Config: topicstore.TopicConfig{Name: "t", MinActivePartitions: 2,
		Consumers: []topicstore.ConsumerConfig{{Name: "c"}}}}}
	stmts, err := parser.Parse(q)
	require.NoError(t, err)
	p, _, err := planner.Build(cat, stmts[0], nil)
	require.NoError(t, err, q)
	n, ok := plantree.Tree(p.(*plantree.SelectPlan)).(*plantree.ConsumerReadNode)
	require.True(t, ok, "%s: a consumer read at the top of its tree", q)
	return n
}

// TestDirectCols: a read whose result columns are all bare message
// columns encodeMsg writes takes the direct path, whatever hidden sort
// columns follow them; anything else is evaluated row by row.
func TestDirectCols(t *testing.T) {
	for q, want := range map[string]string{
		"SELECT partition, offset, data FROM t WITH (CONSUMER = c) LIMIT 3":             "partition offset data",
		"SELECT seqno, producer_id, message_group_id, codec FROM t WITH (CONSUMER = c)": "seqno producer_id message_group_id codec",
		"SELECT data FROM t WITH (CONSUMER = c) ORDER BY partition, offset":             "data",
		"SELECT key, headers, data FROM t WITH (CONSUMER = c)":                          "key headers data",
		"SELECT data, attrs FROM t WITH (CONSUMER = c)":                                 "",
		"SELECT offset + 1 FROM t WITH (CONSUMER = c)":                                  "",
		"SELECT written_at FROM t WITH (CONSUMER = c, WAIT = '1s') LIMIT 1":             "",
	} {
		n := consumerRead(t, q)
		var got []string
		for _, c := range directCols(n) {
			got = append(got, plantree.MsgColumns[c].Name)
		}
		require.Equal(t, want, strings.Join(got, " "), q)
	}
}
