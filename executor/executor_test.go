package executor

import (
	"bufio"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"topicgate/planner"
	"topicgate/planner/plantree"
	"topicgate/sql"
)

func TestUnescapeCopy(t *testing.T) {
	require.Equal(t, "a\tb\\c\x01A", unescapeCopy(`a\tb\\c\001\x41`))
	require.Equal(t, "plain", unescapeCopy("plain"))
}

func TestReadCSVRecord(t *testing.T) {
	r := bufio.NewReader(strings.NewReader("a,\"b,c\",,\"\"\n\"x\"\"y\",\"multi\nline\"\n"))
	f, q, raw, err := readCSVRecord(r, ',', '"', '"')
	require.NoError(t, err)
	require.Equal(t, []string{"a", "b,c", "", ""}, f)
	require.Equal(t, []bool{false, true, false, true}, q)
	require.Equal(t, "a,\"b,c\",,\"\"\n", raw)
	f, _, raw, err = readCSVRecord(r, ',', '"', '"')
	require.NoError(t, err)
	require.Equal(t, []string{`x"y`, "multi\nline"}, f)
	require.Equal(t, "\"x\"\"y\",\"multi\nline\"\n", raw)
	// A quote left open: the record's text comes with the error.
	_, _, raw, err = readCSVRecord(bufio.NewReader(strings.NewReader("\"abc\n")), ',', '"', '"')
	require.ErrorIs(t, err, errUnterminatedCSV)
	require.Equal(t, "\"abc\n", raw)
}

func TestEvalThreeValuedLogic(t *testing.T) {
	stmts, err := sql.Parse("SELECT NULL AND false, NULL OR true, NULL AND true, 1 IN (2, NULL), NOT (NULL::bool)")
	require.NoError(t, err)
	p, _, err := planner.Build(nil, stmts[0], nil)
	require.NoError(t, err)
	ec := &evalCtx{}
	var got []any
	for _, e := range p.(*plantree.SelectPlan).Project {
		v, err := ec.eval(e, valuesRow(nil))
		require.NoError(t, err)
		got = append(got, v)
	}
	require.Equal(t, []any{false, true, nil, nil, nil}, got)
}
