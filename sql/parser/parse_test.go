package parser

import (
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"topicgate/internal/datadriven"
	"topicgate/sql"
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
		line := sql.Format(s)
		if n := sql.NumParams(s); n > 0 {
			line += fmt.Sprintf(" -- params=%d", n)
		}
		line += roundTrip(s)
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n")
}

// roundTrip parses the Format of an authorization statement (or SET)
// again and returns "" when it reads back as the same tree, else what
// differs (these trees hold no positions, so they compare whole).
func roundTrip(s sql.Stmt) string {
	switch s.(type) {
	case *sql.CreateRole, *sql.AlterRole, *sql.DropRole, *sql.GrantPrivs, *sql.GrantRole,
		*sql.AlterDefaultPrivileges, *sql.AlterOwner, *sql.ReassignOwned, *sql.DropOwned:
	default:
		return ""
	}
	text := sql.Format(s)
	again, err := Parse(text)
	switch {
	case err != nil:
		return fmt.Sprintf(" -- does not parse again: %v", err)
	case len(again) != 1 || !reflect.DeepEqual(again[0], s):
		return fmt.Sprintf(" -- parses again as another tree: %#v", again[0])
	}
	return ""
}

// TestDataDriven runs testdata/*.txt (the format of internal/datadriven:
// "query\n----\nexpected\n" cases separated by blank lines, # comments
// before a query). Run with -rewrite to regenerate the expected output.
func TestDataDriven(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			datadriven.RunFile(t, file, *rewriteFlag, runCase)
		})
	}
}
