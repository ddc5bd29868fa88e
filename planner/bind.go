package planner

import (
	"errors"
	"math"

	"github.com/cockroachdb/apd/v3"

	"topicgate/sql"
	"topicgate/sql/pgerror"
	"topicgate/sql/values"
)

// Scope resolves column names for the binder.
type Scope struct {
	Names []string
	Types []Type
	// Lookup, when set, resolves names not in Names (e.g. YDB aliases); it
	// returns an index into Names.
	Lookup func(name string) (int, bool)
	// Source names the relation for error messages.
	Source string
	// Quals, when set (a join), is each column's relation name or alias:
	// names may be qualified and an unqualified one must be unique.
	Quals []string
	// QualOnly marks columns only a qualified name reaches: the right
	// side's copy of a USING column (the unqualified name is the left's).
	QualOnly []bool
	// Outer, in a subquery of an expression, is the scope of the query
	// around it: names not found here resolve there, as OuterRefs, which
	// outerUse records.
	Outer    *Scope
	outerUse *outerUse
	// lateral marks the left side of a join as a lateral item to its
	// right sees it (lateral.go): past its columns, Outer's follow.
	lateral bool
	// Rel, in a subquery's single-relation scope, is the relation's name
	// or alias: a name qualified otherwise is looked up outside.
	Rel string
}

// withOuter returns a copy of s (which may be shared, or nil) whose names
// not found fall back to outer.
func (s *Scope) withOuter(outer *Scope, use *outerUse, rel string) *Scope {
	var c Scope
	if s != nil {
		c = *s
	}
	c.Outer, c.outerUse, c.Rel = outer, use, rel
	return &c
}

// outerUse collects what a subquery of an expression takes from the query
// around it: the columns it reads, and whether it calls a volatile
// function (then its result is not reused for equal columns).
type outerUse struct {
	cols     map[int]bool
	volatile bool
}

// volatileFuncs return a new value at every call.
var volatileFuncs = map[string]bool{"clock_timestamp": true, "gen_random_uuid": true}

// resolveRef resolves a possibly qualified column reference. Without
// Quals (one relation) the qualifier is not checked.
func (s *Scope) resolveRef(table, name string) (int, error) {
	// In a subquery, a name qualified by another relation is not here
	// (the query around may have it).
	otherRel := s != nil && s.Rel != "" && table != "" && table != s.Rel
	if s != nil && s.Quals != nil {
		found := -1
		for i, n := range s.Names {
			if n != name || table != "" && s.Quals[i] != table || table == "" && s.QualOnly[i] {
				continue
			}
			if found >= 0 {
				return 0, pgerror.Newf(pgerror.CodeAmbiguousColumn, "column reference \"%s\" is ambiguous", name)
			}
			found = i
		}
		if found >= 0 {
			return found, nil
		}
	} else if i, _, ok := s.resolve(name); ok && !otherRel {
		return i, nil
	}
	col := name
	if table != "" {
		col = table + "." + name
	}
	if s == nil || s.Source == "" {
		return 0, pgerror.Newf(pgerror.CodeUndefinedColumn, "column \"%s\" does not exist", col)
	}
	return 0, pgerror.Newf(pgerror.CodeUndefinedColumn, "column \"%s\" does not exist in %s", col, s.Source)
}

func (s *Scope) resolve(name string) (int, Type, bool) {
	if s == nil {
		return 0, 0, false
	}
	for i, n := range s.Names {
		if n == name {
			return i, s.Types[i], true
		}
	}
	if s.Lookup != nil {
		if i, ok := s.Lookup(name); ok {
			return i, s.Types[i], true
		}
	}
	return 0, 0, false
}

// binder type-checks AST expressions into planner expressions.
type binder struct {
	params      *[]Type
	scope       *Scope
	allowAgg    bool
	argAggs     bool // an aggregate's arguments may hold aggregates (a window aggregate's, over grouped rows)
	aggs        []*AggExpr
	allowWindow bool
	wins        []*WindowExpr
	allowSRF    bool            // set-returning functions allowed (the select list, ORDER BY)
	srfWhere    string          // else the clause named in the error (srfError)
	cat         Catalog         // for subqueries; nil where they are not allowed
	subs        []*SubqueryExpr // the subqueries bound, for SelectPlan.Subqueries
	nsub        int
}

func newBinder(params *[]Type, scope *Scope) *binder { return &binder{params: params, scope: scope} }

func (b *binder) param(n int) *ParamExpr {
	for len(*b.params) < n {
		*b.params = append(*b.params, TUnknown)
	}
	return &ParamExpr{Idx: n - 1, types: b.params}
}

// bind binds e; want (may be TUnknown) is the type the context expects,
// used to type parameters and untyped literals.
func (b *binder) bind(e sql.Expr, want Type) (Expr, error) {
	x, err := b.bind0(e, want)
	if err == nil && want != TUnknown && isUntyped(x) {
		x, err = coerce(x, want)
	}
	if err != nil {
		return nil, pgerror.At(err, sql.ExprPos(e))
	}
	return x, nil
}

func isUntyped(e Expr) bool {
	switch x := e.(type) {
	case *ParamExpr:
		return x.Type() == TUnknown
	case *ConstExpr:
		return x.T == TUnknown || x.T == TNull
	}
	return false
}

// coerce gives an untyped expression type t.
func coerce(e Expr, t Type) (Expr, error) {
	switch x := e.(type) {
	case *ParamExpr:
		if x.Type() == TUnknown {
			(*x.types)[x.Idx] = t
		}
		return x, nil
	case *ConstExpr:
		if x.V == nil {
			return &ConstExpr{V: nil, T: t}, nil
		}
		if x.T == TUnknown {
			if (t == TDate || t == TTimestamptz) && values.DateOrderMatters(x.V.(string)) {
				// '01/02/2024' reads in the session's DateStyle, known
				// when the statement runs.
				return &CastExpr{X: x, T: t}, nil
			}
			v, err := values.ParseText(x.V.(string), t)
			if err != nil {
				return nil, err
			}
			return &ConstExpr{V: v, T: t}, nil
		}
	}
	return e, nil
}

func (b *binder) bind0(e sql.Expr, want Type) (Expr, error) {
	switch x := e.(type) {
	case *sql.ColumnRef:
		i, err := b.scope.resolveRef(x.Table, x.Name)
		if err != nil {
			return b.outerRef(x, err)
		}
		return &ColExpr{Idx: i, T: b.scope.Types[i], Name: b.scope.Names[i]}, nil
	case *sql.Const:
		return constExpr(x.Lit)
	case *sql.ParamRef:
		return b.param(x.N), nil
	case *sql.Cast:
		if e, ok, err := b.bindRegtypeCast(x); ok {
			return e, err
		}
		t, ok := values.TypeFromName(x.Type)
		if !ok {
			// The position is the type name's, as PostgreSQL's.
			return nil, pgerror.At(pgerror.Newf(pgerror.CodeUndefinedObject, "type \"%s\" does not exist", x.Type), x.TypePos)
		}
		inner, err := b.bind(x.X, TUnknown)
		if err != nil {
			return nil, err
		}
		if c, ok := inner.(*ConstExpr); ok && c.T == TUnknown {
			if str, isStr := c.V.(string); isStr && x.Type == "regclass" && b.cat != nil {
				oid, err := regclassOID(b.cat, str) // 'name'::regclass names a relation
				if err != nil {
					return nil, err
				}
				return &ConstExpr{V: oid, T: TOid}, nil
			}
			if str, isStr := c.V.(string); isStr && x.Type == "regproc" {
				oid, err := regprocOID(str) // 'name'::regproc names a function (psql's \sf)
				if err != nil {
					return nil, err
				}
				return &ConstExpr{V: oid, T: TOid}, nil
			}
			return coerce(c, t)
		}
		if p, ok := inner.(*ParamExpr); ok && p.Type() == TUnknown {
			return coerce(p, t)
		}
		return &CastExpr{X: inner, T: t}, nil
	case *sql.BinOp:
		return b.bindBinOp(x)
	case *sql.UnaryOp:
		switch x.Op {
		case "NOT":
			inner, err := b.bind(x.X, TBool)
			if err != nil {
				return nil, err
			}
			if err := wantType(inner, TBool, "argument of NOT"); err != nil {
				return nil, err
			}
			return &NotExpr{X: inner}, nil
		case "-":
			inner, err := b.bind(x.X, TInt8)
			if err != nil {
				return nil, err
			}
			if c, ok := inner.(*ConstExpr); ok {
				switch v := c.V.(type) {
				case int64:
					return &ConstExpr{V: -v, T: c.T}, nil
				case float64:
					return &ConstExpr{V: -v, T: c.T}, nil
				case *apd.Decimal:
					n, err := values.NumericNeg(v)
					if err != nil {
						return nil, err
					}
					return &ConstExpr{V: n, T: c.T}, nil
				}
			}
			if !inner.Type().IsNumeric() && inner.Type() != TInterval {
				return nil, pgerror.Newf(pgerror.CodeUndefinedFunction, "operator does not exist: - %s", inner.Type())
			}
			return &NegExpr{X: inner}, nil
		case "+":
			return b.bind(x.X, want)
		}
	case *sql.FuncCall:
		return b.bindFunc(x)
	case *sql.InList:
		l, err := b.bind(x.X, TUnknown)
		if err != nil {
			return nil, err
		}
		list := make([]Expr, len(x.List))
		for i, it := range x.List {
			if list[i], err = b.bind(it, l.Type()); err != nil {
				return nil, err
			}
			if err := comparable(l, list[i], "IN"); err != nil {
				return nil, err
			}
		}
		if isUntyped(l) && len(list) > 0 {
			if l, err = coerce(l, list[0].Type()); err != nil {
				return nil, err
			}
		}
		return &InExpr{X: l, List: list, Not: x.Not}, nil
	case *sql.Between:
		l, err := b.bind(x.X, TUnknown)
		if err != nil {
			return nil, err
		}
		lo, err := b.bind(x.Lo, l.Type())
		if err != nil {
			return nil, err
		}
		hi, err := b.bind(x.Hi, l.Type())
		if err != nil {
			return nil, err
		}
		var out Expr = &LogicExpr{And: true, Args: []Expr{&CmpExpr{Op: ">=", L: l, R: lo}, &CmpExpr{Op: "<=", L: l, R: hi}}}
		if x.Not {
			out = &NotExpr{X: out}
		}
		return out, nil
	case *sql.IsNull:
		inner, err := b.bind(x.X, TUnknown)
		if err != nil {
			return nil, err
		}
		return &IsNullExpr{X: inner, Not: x.Not}, nil
	case *sql.IsBool:
		inner, err := b.bind(x.X, TBool)
		if err != nil {
			return nil, err
		}
		if x.Unknown { // a boolean's third value is NULL
			if isUntyped(inner) {
				if inner, err = coerce(inner, TBool); err != nil {
					return nil, err
				}
			}
			if err := wantType(inner, TBool, "argument of IS UNKNOWN"); err != nil {
				return nil, err
			}
			return &IsNullExpr{X: inner, Not: x.Not}, nil
		}
		return &IsBoolExpr{X: inner, Value: x.Value, Not: x.Not}, nil
	case *sql.AnyAll:
		l, err := b.bind(x.X, TUnknown)
		if err != nil {
			return nil, err
		}
		arrWant := TUnknown
		if l.Type() != TUnknown {
			arrWant = values.ArrayOf(l.Type())
		}
		var arr Expr
		if lit, ok := x.Array.(*sql.ArrayLit); ok {
			arr, err = b.bindArray(lit, l.Type())
		} else {
			arr, err = b.bind(x.Array, arrWant)
		}
		if err != nil {
			return nil, err
		}
		if isUntyped(l) && arr.Type() != TUnknown {
			if l, err = coerce(l, arr.Type().ElemType()); err != nil {
				return nil, err
			}
		}
		return &AnyExpr{Op: x.Op, X: l, Array: arr, All: x.All}, nil
	case *sql.ArrayLit:
		return b.bindArray(x, want.ElemType())
	case *sql.Case:
		return b.noSRF("CASE", func() (Expr, error) { return b.bindCase(x, want) })
	case *sql.Coalesce:
		var args []Expr
		var t Type
		_, err := b.noSRF("COALESCE", func() (e Expr, err error) {
			args, t, err = b.bindCommon(x.Args, want, "COALESCE")
			return nil, err
		})
		if err != nil {
			return nil, err
		}
		return &CoalesceExpr{Args: args, T: t}, nil
	case *sql.NullIf:
		args, t, err := b.bindCommon([]sql.Expr{x.A, x.B}, want, "NULLIF")
		if err != nil {
			return nil, err
		}
		return &CaseExpr{Whens: []CaseWhen{{Cond: &CmpExpr{Op: "=", L: args[0], R: args[1]}, Result: &ConstExpr{T: t}}}, Else: args[0], T: t}, nil
	case *sql.Default:
		// DEFAULT in VALUES: the column is absent for this row.
		return &ConstExpr{V: nil, T: want}, nil
	case *sql.Star:
		return nil, pgerror.New(pgerror.CodeSyntaxError, "* is only allowed in a select list or count(*)")
	case *sql.SubLink:
		return b.bindSubLink(x)
	case *sql.Collate:
		inner, err := b.bind(x.X, want)
		if err != nil {
			return nil, err
		}
		if isUntyped(inner) {
			if inner, err = coerce(inner, TText); err != nil {
				return nil, err
			}
		}
		if t := inner.Type(); !t.IsText() && t != TTextArray && t != TNull {
			return nil, pgerror.Newf(pgerror.CodeDatatypeMismatch, "collations are not supported by type %s", t)
		}
		return inner, nil // every collation topicgate accepts compares bytewise
	case *sql.Subscript:
		arr, err := b.bind(x.X, TUnknown)
		if err != nil {
			return nil, err
		}
		et := arr.Type().ElemType()
		if et == TUnknown {
			return nil, pgerror.Newf(pgerror.CodeDatatypeMismatch, "cannot subscript type %s because it does not support subscripting", arr.Type())
		}
		idx, err := b.bind(x.Index, TInt4)
		if err != nil {
			return nil, err
		}
		if isUntyped(idx) {
			if idx, err = coerce(idx, TInt4); err != nil {
				return nil, err
			}
		}
		if !idx.Type().IsInt() && idx.Type() != TNull {
			return nil, pgerror.Newf(pgerror.CodeDatatypeMismatch, "array subscript must have type integer")
		}
		return &SubscriptExpr{X: arr, Index: idx, T: et}, nil
	}
	return nil, pgerror.Newf(pgerror.CodeFeatureNotSupported, "expression %T is not supported", e)
}

func constExpr(l sql.Literal) (Expr, error) {
	switch l.Kind {
	case sql.LitNull:
		return &ConstExpr{V: nil, T: TNull}, nil
	case sql.LitInt:
		// As in PostgreSQL, an integer literal is an integer (int4) when
		// it fits, else a bigint.
		if l.Int >= math.MinInt32 && l.Int <= math.MaxInt32 {
			return &ConstExpr{V: l.Int, T: TInt4}, nil
		}
		return &ConstExpr{V: l.Int, T: TInt8}, nil
	case sql.LitFloat:
		// 1.5 and 1e3 are numeric in PostgreSQL.
		d, err := values.ParseNumeric(l.Str)
		if err != nil {
			return nil, err
		}
		return &ConstExpr{V: d, T: TNumeric}, nil
	case sql.LitString:
		return &ConstExpr{V: l.Str, T: TUnknown}, nil
	case sql.LitBool:
		return &ConstExpr{V: l.Bool, T: TBool}, nil
	case sql.LitInterval:
		return &ConstExpr{V: l.Dur, T: TInterval}, nil
	case sql.LitTime:
		return &ConstExpr{V: l.Time, T: TTimestamptz}, nil
	case sql.LitIdent:
		return nil, pgerror.Newf(pgerror.CodeUndefinedColumn, "column \"%s\" does not exist", l.Str)
	}
	return nil, pgerror.Newf(pgerror.CodeFeatureNotSupported, "literal kind %d is not supported here", l.Kind)
}

func wantType(e Expr, t Type, what string) error {
	if e.Type() == t || e.Type() == TNull || e.Type() == TUnknown {
		return nil
	}
	return pgerror.Newf(pgerror.CodeDatatypeMismatch, "%s must be type %s, not type %s", what, t, e.Type())
}

// comparable reports whether values of l's and r's types can be compared.
func comparable(l, r Expr, op string) error {
	lt, rt := l.Type(), r.Type()
	if lt == rt || lt == TUnknown || rt == TUnknown || lt == TNull || rt == TNull {
		return nil
	}
	if lt.IsNumeric() && rt.IsNumeric() || lt.IsText() && rt.IsText() {
		return nil
	}
	if (lt == TJSONB || lt == TJSON) && (rt == TJSONB || rt == TJSON) {
		return nil
	}
	if (lt == TDate || lt == TTimestamptz) && (rt == TDate || rt == TTimestamptz) {
		return nil // a date compares as its midnight (UTC)
	}
	return pgerror.Newf(pgerror.CodeUndefinedFunction, "operator does not exist: %s %s %s", lt, op, rt).
		WithHint("No operator matches the given name and argument types. You might need to add explicit type casts.")
}

func (b *binder) bindArray(x *sql.ArrayLit, elem Type) (Expr, error) {
	elems := make([]Expr, len(x.Elems))
	for i, e := range x.Elems {
		var err error
		if elems[i], err = b.bind(e, elem); err != nil {
			return nil, err
		}
		if elem == TUnknown && !isUntyped(elems[i]) { // ARRAY['a', NULL]: the first typed element's type
			elem = elems[i].Type()
		}
	}
	if elem == TUnknown || elem == TNull {
		elem = TText
	}
	for i, e := range elems {
		if isUntyped(e) {
			var err error
			if elems[i], err = coerce(e, elem); err != nil {
				return nil, pgerror.At(err, sql.ExprPos(x.Elems[i]))
			}
		}
	}
	return &ArrayExpr{Elems: elems, T: values.ArrayOf(elem)}, nil
}

// bindCommon binds the branches of CASE, COALESCE or NULLIF (what) to one
// type, as PostgreSQL resolves them: the first typed branch sets it (want
// only when every branch is an untyped literal or parameter), numeric
// branches widen to the widest, untyped ones are read as it, and other
// mixtures are 42804.
func (b *binder) bindCommon(args []sql.Expr, want Type, what string) ([]Expr, Type, error) {
	out := make([]Expr, len(args))
	t := TUnknown
	for i, a := range args {
		hint := t
		if hint == TUnknown {
			hint = want
		}
		var err error
		if out[i], err = b.bind(a, hint); err != nil {
			return nil, 0, err
		}
		if isUntyped(out[i]) {
			continue
		}
		switch at := out[i].Type(); {
		case t == TUnknown:
			t = at
		case at != t && at.IsNumeric() && t.IsNumeric():
			t = max(rankOf(at), rankOf(t)).typ()
		case (at == TDate || at == TTimestamptz) && (t == TDate || t == TTimestamptz):
			t = TTimestamptz
		case at != t && !(at.IsText() && t.IsText()):
			return nil, 0, pgerror.Newf(pgerror.CodeDatatypeMismatch, "%s types %s and %s cannot be matched", what, t, at)
		}
	}
	if t == TUnknown {
		if t = want; t == TUnknown || t == TNull {
			t = TText
		}
	}
	for i := range out {
		var err error
		if isUntyped(out[i]) {
			out[i], err = coerce(out[i], t)
		} else if out[i].Type() != t {
			out[i] = &CastExpr{X: out[i], T: t}
		}
		if err != nil {
			return nil, 0, err
		}
	}
	return out, t, nil
}

// numericRank orders numeric types by width for CASE/COALESCE resolution.
type numericRank int

func rankOf(t Type) numericRank {
	switch t {
	case TInt2:
		return 1
	case TInt4, TOid:
		return 2
	case TInt8:
		return 3
	case TNumeric:
		return 4
	}
	return 5 // float8
}

func (r numericRank) typ() Type {
	return [...]Type{TInt2, TInt2, TInt4, TInt8, TNumeric, TFloat8}[r]
}

func (b *binder) bindCase(x *sql.Case, want Type) (Expr, error) {
	var arg Expr
	var err error
	if x.Arg != nil {
		if arg, err = b.bind(x.Arg, TUnknown); err != nil {
			return nil, err
		}
	}
	// PostgreSQL resolves a CASE's type from its ELSE first, then the WHENs.
	results := make([]sql.Expr, 0, len(x.Whens)+1)
	if x.Else != nil {
		results = append(results, x.Else)
	}
	for _, w := range x.Whens {
		results = append(results, w.Result)
	}
	bound, t, err := b.bindCommon(results, want, "CASE")
	if err != nil {
		return nil, err
	}
	if x.Else != nil { // back to WHENs..., ELSE
		bound = append(bound[1:], bound[0])
	}
	out := &CaseExpr{T: t}
	for i, w := range x.Whens {
		var cond Expr
		if arg != nil {
			v, err := b.bind(w.Cond, arg.Type())
			if err != nil {
				return nil, err
			}
			cond = &CmpExpr{Op: "=", L: arg, R: v}
		} else if cond, err = b.bind(w.Cond, TBool); err != nil {
			return nil, err
		}
		out.Whens = append(out.Whens, CaseWhen{Cond: cond, Result: bound[i]})
	}
	if x.Else != nil {
		out.Else = bound[len(bound)-1]
	}
	return out, nil
}

// outerRef resolves a column this query lacks (err) in the query around
// it, for a correlated subquery.
func (b *binder) outerRef(x *sql.ColumnRef, err error) (Expr, error) {
	var pe *pgerror.Error
	if b.scope == nil || b.scope.Outer == nil || !errors.As(err, &pe) || pe.Code != pgerror.CodeUndefinedColumn {
		return nil, err
	}
	o := b.scope.Outer
	if i, oerr := o.resolveRef(x.Table, x.Name); oerr == nil {
		b.scope.outerUse.add(i)
		return &OuterRef{Idx: i, T: o.Types[i], Name: o.Names[i]}, nil
	} else if !errors.As(oerr, &pe) || pe.Code != pgerror.CodeUndefinedColumn {
		return nil, oerr // ambiguous there
	}
	far := o.Outer
	if o.lateral && far != nil {
		if ref, ok, err := b.lateralOuterRef(o, x); ok || err != nil {
			return ref, err
		}
		far = far.Outer
	}
	for ; far != nil; far = far.Outer {
		if _, ferr := far.resolveRef(x.Table, x.Name); ferr == nil {
			return nil, pgerror.Newf(pgerror.CodeFeatureNotSupported,
				"a subquery's reference to column \"%s\" of a query two or more levels out is not supported", x.Name)
		}
	}
	return nil, err
}
