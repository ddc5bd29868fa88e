package plantree_test

import (
	"flag"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"topicgate/internal/datadriven"
	"topicgate/planner"
	"topicgate/planner/plantree"
	"topicgate/sql/parser"
	"topicgate/topicstore"
)

var rewriteFlag = flag.Bool("rewrite", false, "rewrite the expected output of testdata/rules/*")

// TestRules runs testdata/rules/<rule>, a file per rule of Rules() (the
// format of internal/datadriven: a query, "----", the output). A case's
// output says whether the rule changes the query's tree, comparing the
// statement planned with every rule to the statement planned without this
// one, and prints the tree as EXPLAIN's text does (without what EXPLAIN
// asks the session): both trees when the rule fires, so its effect shows,
// else the one. Each file has a case where its rule fires and one where it
// must not. Run with -rewrite to regenerate the expected output.
func TestRules(t *testing.T) {
	files, err := filepath.Glob("testdata/rules/*")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range files {
		names = append(names, filepath.Base(f))
	}
	slices.Sort(names)
	want := slices.Sorted(slices.Values(plantree.Rules()))
	if !slices.Equal(names, want) {
		t.Fatalf("testdata/rules has %v, want a file per rule: %v", names, want)
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			var fired, idle int
			datadriven.RunFile(t, filepath.Join("testdata", "rules", name), *rewriteFlag, func(q string) string {
				with, without := explainRule(t, q, ""), explainRule(t, q, name)
				if with == without {
					idle++
					return name + " does not fire:\n" + with
				}
				fired++
				return "without " + name + ":\n" + without + "\nwith " + name + ":\n" + with
			})
			if fired == 0 || idle == 0 {
				t.Errorf("%s: %d case(s) where the rule fires and %d where it does not: want both", name, fired, idle)
			}
		})
	}
}

// rulesCatalog holds the topics the rule cases read.
var rulesCatalog = fakeCatalog{
	"events": {Config: topicstore.TopicConfig{Name: "events", MinActivePartitions: 4,
		Consumers: []topicstore.ConsumerConfig{{Name: "c"}, {Name: "q", Shared: true}}}},
	"clicks": {Config: topicstore.TopicConfig{Name: "clicks", MinActivePartitions: 2}},
}

// explainRule plans query with every rule but skip ("": all of them) and
// prints its tree.
func explainRule(t *testing.T, query, skip string) string {
	t.Helper()
	defer plantree.WithoutRule(skip)()
	stmts, err := parser.Parse(query)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	if len(stmts) != 1 {
		t.Fatalf("%s: %d statements, want 1", query, len(stmts))
	}
	p, _, err := planner.Build(rulesCatalog, stmts[0], nil)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	sp, ok := p.(*plantree.SelectPlan)
	if !ok {
		t.Fatalf("%s: a %T, want a query", query, p)
	}
	return strings.Join(plantree.ExplainText(plantree.Tree(sp), 0, false, nil), "\n")
}
