// Package datadriven runs test files of cases, each an input and the
// output expected of it, and rewrites their expectations on request. The
// parser's cases (sql/parser/testdata/*.txt) and the planner's rule cases
// (planner/plantree/testdata/rules/*) are such files.
//
// A file is cases separated by blank lines. A case is its input lines, a
// line "----", then the expected output (no blank line in it); lines
// starting with # before the input are comments, and a block of comments
// only stands on its own. With rewrite, each case's expected output is
// replaced by what the test produced and the comments are kept.
package datadriven

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// RunFile runs each case of the file at path through run and reports an
// error for each output that is not the case's expected one; with rewrite
// it writes the file back with run's outputs instead.
func RunFile(t testing.TB, path string, rewrite bool, run func(input string) string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	blocks := strings.Split(strings.TrimRight(string(data), "\n")+"\n", "\n\n")
	for _, blk := range blocks {
		blk = strings.Trim(blk, "\n")
		if blk == "" {
			continue
		}
		var comments []string
		lines := strings.Split(blk, "\n")
		for len(lines) > 0 && strings.HasPrefix(lines[0], "#") {
			comments = append(comments, lines[0])
			lines = lines[1:]
		}
		sep := len(lines)
		for i, l := range lines {
			if l == "----" {
				sep = i
				break
			}
		}
		input := strings.Join(lines[:sep], "\n")
		want := ""
		if sep < len(lines) {
			want = strings.Join(lines[sep+1:], "\n")
		}
		if input == "" && len(comments) > 0 {
			out.WriteString(strings.Join(comments, "\n") + "\n\n")
			continue
		}
		got := run(input)
		if !rewrite && want != got {
			t.Errorf("%s: input:\n%s\ngot:\n%s\nwant:\n%s", path, input, got, want)
		}
		for _, c := range comments {
			out.WriteString(c + "\n")
		}
		fmt.Fprintf(&out, "%s\n----\n%s\n\n", input, got)
	}
	if rewrite {
		if err := os.WriteFile(path, []byte(strings.TrimRight(out.String(), "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
