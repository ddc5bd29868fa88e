package sql

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"topicgate/sql/pgerror"
)

var rewriteFlag = flag.Bool("rewrite", false, "rewrite the expected output in testdata/*.txt")

// runCase parses query and prints one line per statement (Format, plus
// "-- params=N" when it uses parameters), or "error CODE [at POS]: msg".
func runCase(query string) string {
	stmts, err := Parse(query)
	if err != nil {
		var pe *pgerror.Error
		if !errors.As(err, &pe) {
			return fmt.Sprintf("error (not a pgerror: %T): %v", err, err)
		}
		at := ""
		if pe.Position > 0 {
			at = fmt.Sprintf(" at %d", pe.Position)
		}
		return fmt.Sprintf("error %s%s: %s", pe.Code, at, pe.Message)
	}
	var lines []string
	for _, s := range stmts {
		line := Format(s)
		if n := NumParams(s); n > 0 {
			line += fmt.Sprintf(" -- params=%d", n)
		}
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n")
}

// TestDataDriven runs testdata/*.txt: cases are "query\n----\nexpected\n"
// separated by blank lines; lines starting with # before a query are
// comments. Run with -rewrite to regenerate the expected output.
func TestDataDriven(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
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
				query := strings.Join(lines[:sep], "\n")
				want := ""
				if sep < len(lines) {
					want = strings.Join(lines[sep+1:], "\n")
				}
				if query == "" && len(comments) > 0 {
					out.WriteString(strings.Join(comments, "\n") + "\n\n")
					continue
				}
				got := runCase(query)
				if !*rewriteFlag && want != got {
					t.Errorf("%s: query:\n%s\ngot:\n%s\nwant:\n%s", file, query, got, want)
				}
				for _, c := range comments {
					out.WriteString(c + "\n")
				}
				fmt.Fprintf(&out, "%s\n----\n%s\n\n", query, got)
			}
			if *rewriteFlag {
				if err := os.WriteFile(file, []byte(strings.TrimRight(out.String(), "\n")+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}
