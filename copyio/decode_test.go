package copyio

import (
	"bufio"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
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
