package planner

import (
	"topicgate/planner/plantree"
	"topicgate/planner/scalar"
	"topicgate/sql"
	"topicgate/sql/pgerror"
)

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
	case scalar.ReturnsSet(f.Name):
		b.AllowSRF = true
		fs.Call, err = b.BindSRF(f)
		b.AllowSRF = false
		if err != nil {
			return nil, err
		}
		if cols := scalar.RecordColumns(f.Name); cols != nil {
			fs.Cols = append(fs.Cols, cols...)
		} else {
			fs.Cols = []plantree.Column{{Name: name, T: fs.Call.Type()}}
		}
	default:
		if fs.Call, err = b.Bind(f, TUnknown); err != nil {
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
	case scalar.IsAggregate(f.Name):
		return pgerror.New(pgerror.CodeGroupingError, "aggregate functions are not allowed in functions in FROM")
	}
	nested := false
	for _, a := range f.Args {
		sql.WalkStmt(&sql.Select{Where: a}, func(e sql.Expr) {
			if c, ok := e.(*sql.FuncCall); ok && scalar.ReturnsSet(c.Name) {
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
