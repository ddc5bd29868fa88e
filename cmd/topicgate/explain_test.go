package main

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestExplainAnalyzeTiming: EXPLAIN ANALYZE with timing (its default)
// reports each node's startup and total time as PostgreSQL prints them,
// and the statement's execution time; FORMAT JSON is one valid document.
func TestExplainAnalyzeTiming(t *testing.T) {
	a := startTestServer(t)
	c := connect(t, a)
	ctx := context.Background()
	fillTopic(t, c, "et", 2, 50)
	rows, err := c.Query(ctx, "EXPLAIN ANALYZE SELECT partition, count(*) FROM et GROUP BY partition ORDER BY 1")
	require.NoError(t, err)
	var lines []string
	for rows.Next() {
		var l string
		require.NoError(t, rows.Scan(&l))
		lines = append(lines, l)
	}
	require.NoError(t, rows.Err())
	text := strings.Join(lines, "\n")
	require.Regexp(t, regexp.MustCompile(`^Sort \(actual time=\d+\.\d{3}\.\.\d+\.\d{3} rows=2 loops=1\)`), lines[0])
	require.Regexp(t, regexp.MustCompile(`->  Topic Scan on et \(actual time=\d+\.\d{3}\.\.\d+\.\d{3} rows=50 loops=1\)`), text)
	require.Regexp(t, regexp.MustCompile(`^Execution Time: \d+\.\d{3} ms$`), lines[len(lines)-1])

	var doc string
	require.NoError(t, c.QueryRow(ctx, "EXPLAIN (ANALYZE, FORMAT JSON) SELECT count(*) FROM et a, et b WHERE a.data = b.data").Scan(&doc))
	var parsed []map[string]any
	require.NoError(t, json.Unmarshal([]byte(doc), &parsed), doc)
	require.Len(t, parsed, 1)
	require.Contains(t, parsed[0], "Execution Time")
	plan := parsed[0]["Plan"].(map[string]any)
	require.Equal(t, "Project", plan["Node Type"])
	require.Contains(t, doc, `"Node Type": "Hash Join"`)
	require.Contains(t, doc, `"Actual Total Time"`)
}
