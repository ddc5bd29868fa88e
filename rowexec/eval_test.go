package rowexec

import (
	"testing"

	"github.com/stretchr/testify/require"

	"topicgate/planner"
	"topicgate/planner/plantree"
	"topicgate/sql/parser"
)

func TestEvalThreeValuedLogic(t *testing.T) {
	stmts, err := parser.Parse("SELECT NULL AND false, NULL OR true, NULL AND true, 1 IN (2, NULL), NOT (NULL::bool)")
	require.NoError(t, err)
	p, _, err := planner.Build(nil, stmts[0], nil)
	require.NoError(t, err)
	ec := &EvalCtx{}
	var got []any
	for _, e := range p.(*plantree.SelectPlan).Project {
		v, err := ec.Eval(e, ValuesRow(nil))
		require.NoError(t, err)
		got = append(got, v)
	}
	require.Equal(t, []any{false, true, nil, nil, nil}, got)
}
