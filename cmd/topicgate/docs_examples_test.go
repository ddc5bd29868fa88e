package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDocsExamples runs, with the real psql, every code block of docs/
// whose info string is "sql run" (```sql run), each on a fresh server and
// stopping at the first error: the examples that say they run, do. Every
// SQL block says what it is: "sql run", or "sql syntax" for a synopsis
// with placeholders (a bare ```sql fails the test); a psql session with
// its output is a ```psql block.
func TestDocsExamples(t *testing.T) {
	var files []string
	err := filepath.WalkDir("../../docs", func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".md") {
			files = append(files, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(data), "\n") {
			if strings.TrimSpace(line) == "```sql" {
				t.Errorf("%s: a ```sql block must say whether it runs (```sql run) or is a synopsis (```sql syntax)", f)
			}
		}
		for i, block := range runnableBlocks(string(data)) {
			n++
			t.Run(filepath.Base(f)+"#"+string(rune('1'+i)), func(t *testing.T) {
				a := startTestServer(t)
				path := filepath.Join(t.TempDir(), "example.sql")
				if err := os.WriteFile(path, []byte(block), 0o644); err != nil {
					t.Fatal(err)
				}
				r := runPsql(t, a, "-v", "ON_ERROR_STOP=1", "-f", path)
				psqlRequireOK(t, r)
				if strings.Contains(r.stderr, "ERROR") {
					t.Errorf("%s:\n%s", f, r.stderr)
				}
			})
		}
	}
	if n == 0 {
		t.Fatal("no sql run block in docs/")
	}
}

// runnableBlocks are the bodies of the ```sql run blocks of a page.
func runnableBlocks(page string) []string {
	var out []string
	var cur []string
	in := false
	for _, line := range strings.Split(page, "\n") {
		switch {
		case !in && strings.TrimSpace(line) == "```sql run":
			in, cur = true, nil
		case in && strings.TrimSpace(line) == "```":
			in = false
			out = append(out, strings.Join(cur, "\n")+"\n")
		case in:
			cur = append(cur, line)
		}
	}
	return out
}
