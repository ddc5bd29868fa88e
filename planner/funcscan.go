package planner

import (
	"topicgate/planner/plantree"
	"topicgate/sql"
	"topicgate/sql/pgerror"
)

// recordSRFs are the set-returning functions of several columns, which
// only FROM takes (the select list has no record type): their columns.
var recordSRFs = map[string][]plantree.Column{
	"jsonb_each_text": {{Name: "key", T: TText}, {Name: "value", T: TText}},
	"jsonb_each":      {{Name: "key", T: TText}, {Name: "value", T: TJSONB}},
}

// fromFunc binds a function in FROM; b's scope is what its arguments may
// read (the FROM items to its left and the query around, as OuterRefs;
// nil for nothing).
func fromFunc(b *binder, t *sql.TableRef, p *plantree.SelectPlan) (*Scope, error) {
	f := t.Func
	if err := checkFromFuncCall(f); err != nil {
		return nil, err
	}
	fs := &plantree.FuncScan{Ordinality: t.Ordinality}
	name := f.Name
	if t.Alias != "" {
		name = t.Alias // a function of one column takes the alias as its name
	}
	var err error
	switch {
	case SetReturning[f.Name] || recordSRFs[f.Name] != nil:
		b.allowSRF = true
		fs.Call, err = b.bindSRF(f)
		b.allowSRF = false
		if err != nil {
			return nil, err
		}
		if cols := recordSRFs[f.Name]; cols != nil {
			fs.Cols = append(fs.Cols, cols...)
		} else {
			fs.Cols = []plantree.Column{{Name: name, T: fs.Call.Type()}}
		}
	default:
		if fs.Call, err = b.bind(f, TUnknown); err != nil {
			return nil, err
		}
		fs.Cols = []plantree.Column{{Name: name, T: fs.Call.Type()}}
	}
	if containsSubquery(fs.Call) {
		return nil, pgerror.New(pgerror.CodeFeatureNotSupported, "a subquery in the arguments of a function in FROM is not supported")
	}
	if fs.Ordinality {
		fs.Cols = append(fs.Cols, plantree.Column{Name: "ordinality", T: TInt8})
	}
	p.Func = fs
	return aliasedScope(t, fs.Cols, sourceName("function", name))
}

// checkFromFuncCall refuses, with PostgreSQL's errors, what may not be
// a function in FROM: an aggregate, a window function, and set-returning
// calls in the arguments.
func checkFromFuncCall(f *sql.FuncCall) error {
	switch {
	case f.Over != nil:
		return pgerror.New(pgerror.CodeWindowingError, "window functions are not allowed in functions in FROM")
	case aggregates[f.Name]:
		return pgerror.New(pgerror.CodeGroupingError, "aggregate functions are not allowed in functions in FROM")
	}
	nested := false
	for _, a := range f.Args {
		sql.WalkStmt(&sql.Select{Where: a}, func(e sql.Expr) {
			if c, ok := e.(*sql.FuncCall); ok && (SetReturning[c.Name] || recordSRFs[c.Name] != nil) {
				nested = true
			}
		}, nil)
	}
	if nested {
		return pgerror.New(pgerror.CodeFeatureNotSupported, "set-returning functions must appear at top level of FROM")
	}
	return nil
}

func containsSubquery(e plantree.Expr) bool {
	found := false
	plantree.Walk(e, func(x plantree.Expr) {
		if _, ok := x.(*plantree.SubqueryExpr); ok {
			found = true
		}
	})
	return found
}
