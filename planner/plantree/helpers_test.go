package plantree_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"topicgate/planner"
	"topicgate/planner/plantree"
	"topicgate/sql/parser"
	"topicgate/topicstore"
)

// The trees under test are built by the planner from SQL, as a statement's
// are (this package's tests import the builder; the package does not).

type fakeCatalog map[string]topicstore.TopicInfo

func (c fakeCatalog) Topic(name string) (topicstore.TopicInfo, error) {
	t, ok := c[name]
	if !ok {
		return t, topicstore.ErrTopicNotFound
	}
	return t, nil
}

var cat = fakeCatalog{"t": {Config: topicstore.TopicConfig{Name: "t", MinActivePartitions: 4,
	Consumers: []topicstore.ConsumerConfig{{Name: "c"}, {Name: "q", Shared: true}}}}}

func plan(t *testing.T, q string) plantree.Plan {
	t.Helper()
	stmts, err := parser.Parse(q)
	require.NoError(t, err)
	require.Len(t, stmts, 1)
	p, _, err := planner.Build(cat, stmts[0], nil)
	require.NoError(t, err, q)
	return p
}

func nodes(n plantree.Node) []plantree.Node {
	out := []plantree.Node{n}
	for _, c := range n.Children() {
		out = append(out, nodes(c)...)
	}
	return out
}
