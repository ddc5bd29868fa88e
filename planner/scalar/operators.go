package scalar

// Binary operators: comparison, arithmetic, concatenation, LIKE and the
// jsonb tests, with PostgreSQL's operand types and result types.

import (
	"strings"

	"topicgate/planner/plantree"
	"topicgate/sql"
	"topicgate/sql/pgerror"
	"topicgate/sql/values"

	"github.com/cockroachdb/apd/v3"
)

func (b *Binder) bindBinOp(x *sql.BinOp) (plantree.Expr, error) {
	op := strings.ToUpper(x.Op)
	switch op {
	case "AND", "OR":
		l, err := b.Bind(x.L, values.TBool)
		if err != nil {
			return nil, err
		}
		r, err := b.Bind(x.R, values.TBool)
		if err != nil {
			return nil, err
		}
		for _, e := range []plantree.Expr{l, r} {
			if err := WantType(e, values.TBool, "argument of "+op); err != nil {
				return nil, err
			}
		}
		return &plantree.LogicExpr{And: op == "AND", Args: []plantree.Expr{l, r}}, nil
	case "->", "->>":
		l, err := b.Bind(x.L, values.TJSONB)
		if err != nil {
			return nil, err
		}
		if t := l.Type(); t != values.TJSONB && t != values.TJSON {
			return nil, pgerror.Newf(pgerror.CodeUndefinedFunction, "operator does not exist: %s %s unknown", t, op)
		}
		k, err := b.Bind(x.R, values.TText)
		if err != nil {
			return nil, err
		}
		return &plantree.JSONGetExpr{X: l, Key: k, Text: op == "->>"}, nil
	case "^": // exponentiation, in double precision as PostgreSQL's float8 ^
		return b.bindFunc(&sql.FuncCall{Name: "power", Args: []sql.Expr{x.L, x.R}})
	case "?", "?|", "?&", "@>", "<@":
		return b.bindJSONTest(x, op)
	case "~~", "~~*", "!~~", "!~~*", "LIKE", "ILIKE", "NOT LIKE", "NOT ILIKE", "~", "~*", "!~", "!~*":
		return b.bindLike(x, normLikeOp(op))
	case "#>", "#>>":
		l, err := b.Bind(x.L, values.TJSONB)
		if err == nil && IsUntyped(l) {
			l, err = Coerce(l, values.TJSONB)
		}
		if err != nil {
			return nil, err
		}
		var path plantree.Expr
		if lit, ok := x.R.(*sql.ArrayLit); ok {
			path, err = b.bindArray(lit, values.TText)
		} else {
			path, err = b.Bind(x.R, values.TTextArray)
		}
		if err == nil && IsUntyped(path) {
			path, err = Coerce(path, values.TTextArray)
		}
		if err != nil {
			return nil, err
		}
		if lt, pt := l.Type(), path.Type(); lt != values.TJSONB || (pt != values.TTextArray && pt != values.TNull) {
			return nil, pgerror.Newf(pgerror.CodeUndefinedFunction, "operator does not exist: %s %s %s", lt, op, pt)
		}
		return &plantree.JSONPathExpr{X: l, Path: path, Text: op == "#>>"}, nil
	case "||":
		return b.bindConcat(x)
	}
	l, err := b.Bind(x.L, values.TUnknown)
	if err != nil {
		return nil, err
	}
	rWant := l.Type()
	if rWant == values.TNull { // NULL || 'b': the literal is not a null
		rWant = values.TUnknown
	}
	r, err := b.Bind(x.R, rWant)
	if err != nil {
		return nil, err
	}
	if IsUntyped(l) && !IsUntyped(r) {
		if l, err = Coerce(l, r.Type()); err != nil {
			return nil, err
		}
	}
	if IsUntyped(l) && IsUntyped(r) {
		if l, err = Coerce(l, values.TText); err != nil {
			return nil, err
		}
		if r, err = Coerce(r, values.TText); err != nil {
			return nil, err
		}
	}
	switch op {
	case "=", "<>", "!=", "<", "<=", ">", ">=":
		if op == "!=" {
			op = "<>"
		}
		if err := Comparable(l, r, op); err != nil {
			return nil, err
		}
		return &plantree.CmpExpr{Op: op, L: l, R: r}, nil
	case "IS DISTINCT FROM", "IS NOT DISTINCT FROM":
		if err := Comparable(l, r, op); err != nil {
			return nil, err
		}
		return &plantree.CmpExpr{Op: op, L: l, R: r}, nil
	case "+", "-", "*", "/", "%":
		t, err := arithType(l.Type(), r.Type(), op)
		if err != nil {
			return nil, err
		}
		return &plantree.ArithExpr{Op: op, L: l, R: r, T: t}, nil
	}
	return nil, pgerror.Newf(pgerror.CodeUndefinedFunction, "operator does not exist: %s %s %s", l.Type(), x.Op, r.Type())
}

// bindUnaryOp binds NOT, unary minus (folded into a numeric constant) and
// unary plus.
func (b *Binder) bindUnaryOp(x *sql.UnaryOp, want values.Type) (plantree.Expr, error) {
	switch x.Op {
	case "NOT":
		inner, err := b.Bind(x.X, values.TBool)
		if err != nil {
			return nil, err
		}
		if err := WantType(inner, values.TBool, "argument of NOT"); err != nil {
			return nil, err
		}
		return &plantree.NotExpr{X: inner}, nil
	case "-":
		inner, err := b.Bind(x.X, values.TInt8)
		if err != nil {
			return nil, err
		}
		if c, ok := inner.(*plantree.ConstExpr); ok {
			switch v := c.V.(type) {
			case int64:
				return &plantree.ConstExpr{V: -v, T: c.T}, nil
			case float64:
				return &plantree.ConstExpr{V: -v, T: c.T}, nil
			case *apd.Decimal:
				n, err := values.NumericNeg(v)
				if err != nil {
					return nil, err
				}
				return &plantree.ConstExpr{V: n, T: c.T}, nil
			}
		}
		if !inner.Type().IsNumeric() && inner.Type() != values.TInterval {
			return nil, pgerror.Newf(pgerror.CodeUndefinedFunction, "operator does not exist: - %s", inner.Type())
		}
		return &plantree.NegExpr{X: inner}, nil
	case "+":
		return b.Bind(x.X, want)
	}
	return nil, pgerror.Newf(pgerror.CodeFeatureNotSupported, "expression %T is not supported", x)
}

// bindConcat binds a || b: bytea || bytea is bytea; anything else is text,
// a non-text operand taking its text form ('x' || 1 is 'x1'), as
// PostgreSQL's text || anynonarray.
func (b *Binder) bindConcat(x *sql.BinOp) (plantree.Expr, error) {
	l, err := b.Bind(x.L, values.TUnknown)
	if err != nil {
		return nil, err
	}
	r, err := b.Bind(x.R, values.TUnknown)
	if err != nil {
		return nil, err
	}
	if at := l.Type(); at.ElemType() != values.TUnknown || r.Type().ElemType() != values.TUnknown {
		return bindArrayConcat(x, l, r)
	}
	t := values.TText
	if (l.Type() == values.TBytea || IsUntyped(l)) && (r.Type() == values.TBytea || IsUntyped(r)) && !(IsUntyped(l) && IsUntyped(r)) {
		t = values.TBytea
	}
	for _, e := range []*plantree.Expr{&l, &r} {
		if IsUntyped(*e) {
			if *e, err = Coerce(*e, t); err != nil {
				return nil, err
			}
		}
		// text || date: the operand prints as its type's output (a date
		// as a date, a timestamptz in the session's TimeZone).
		if et := (*e).Type(); t == values.TText && !et.IsText() && et != values.TNull {
			*e = &plantree.CastExpr{X: *e, T: values.TText}
		}
	}
	return &plantree.ArithExpr{Op: "||", L: l, R: r, T: t}, nil
}

// bindJSONTest binds jsonb's key-existence (?, ?|, ?&) and containment
// (@>, <@) operators.
func (b *Binder) bindJSONTest(x *sql.BinOp, op string) (plantree.Expr, error) {
	l, err := b.Bind(x.L, values.TJSONB)
	if err != nil {
		return nil, err
	}
	if IsUntyped(l) {
		if l, err = Coerce(l, values.TJSONB); err != nil {
			return nil, err
		}
	}
	rWant := values.TJSONB
	switch op {
	case "?":
		rWant = values.TText
	case "?|", "?&":
		rWant = values.TTextArray
	}
	var r plantree.Expr
	if lit, ok := x.R.(*sql.ArrayLit); ok && rWant == values.TTextArray {
		r, err = b.bindArray(lit, values.TText)
	} else {
		r, err = b.Bind(x.R, rWant)
	}
	if err != nil {
		return nil, err
	}
	if IsUntyped(r) {
		if r, err = Coerce(r, rWant); err != nil {
			return nil, err
		}
	}
	if lt, rt := l.Type(), r.Type(); lt != values.TJSONB || (rt != rWant && rt != values.TNull) {
		return nil, pgerror.Newf(pgerror.CodeUndefinedFunction, "operator does not exist: %s %s %s", lt, op, rt).
			WithHint("No operator matches the given name and argument types. You might need to add explicit type casts.")
	}
	return &plantree.JSONTestExpr{Op: op, X: l, Y: r}, nil
}

func normLikeOp(op string) string {
	switch op {
	case "LIKE":
		return "~~"
	case "ILIKE":
		return "~~*"
	case "NOT LIKE":
		return "!~~"
	case "NOT ILIKE":
		return "!~~*"
	}
	return op
}

func arithType(l, r values.Type, op string) (values.Type, error) {
	switch {
	case l.IsInt() && r.IsInt():
		if l == values.TInt8 || r == values.TInt8 || l == values.TOid || r == values.TOid {
			return values.TInt8, nil
		}
		return values.TInt4, nil // int2/int4 arithmetic is integer, and overflows as one
	case l.IsNumeric() && r.IsNumeric() && (l == values.TFloat8 || r == values.TFloat8):
		return values.TFloat8, nil
	case l.IsNumeric() && r.IsNumeric(): // numeric with numeric or an integer
		return values.TNumeric, nil
	case l == values.TDate && r.IsInt() && (op == "+" || op == "-"), l.IsInt() && r == values.TDate && op == "+":
		return values.TDate, nil // days
	case l == values.TDate && r == values.TDate && op == "-":
		return values.TInt4, nil // days between
	case l == values.TDate && r == values.TInterval && (op == "+" || op == "-"), l == values.TInterval && r == values.TDate && op == "+":
		return values.TTimestamptz, nil
	case l == values.TTimestamptz && r == values.TInterval && (op == "+" || op == "-"):
		return values.TTimestamptz, nil
	case l == values.TInterval && r == values.TTimestamptz && op == "+":
		return values.TTimestamptz, nil
	case l == values.TTimestamptz && r == values.TTimestamptz && op == "-":
		return values.TInterval, nil
	case l == values.TInterval && r == values.TInterval && (op == "+" || op == "-"):
		return values.TInterval, nil
	case l == values.TInterval && r.IsNumeric() && (op == "*" || op == "/"):
		return values.TInterval, nil
	}
	return 0, pgerror.Newf(pgerror.CodeUndefinedFunction, "operator does not exist: %s %s %s", l, op, r)
}

// bindArrayConcat binds a || b where one side is an array: two arrays of
// one type concatenate (array_cat), and an array with an element of its
// element type appends or prepends it (array_append, array_prepend), as
// in PostgreSQL. An untyped literal takes the other side's type: the
// array's when the other side is an array it could be ('{x}').
func bindArrayConcat(x *sql.BinOp, l, r plantree.Expr) (plantree.Expr, error) {
	at := l.Type()
	if at.ElemType() == values.TUnknown {
		at = r.Type()
	}
	for _, e := range []*plantree.Expr{&l, &r} {
		if !IsUntyped(*e) {
			continue
		}
		var err error
		if *e, err = Coerce(*e, at); err != nil {
			return nil, err
		}
	}
	lt, rt := l.Type(), r.Type()
	ok := lt == at && (rt == at || rt == at.ElemType() || rt == values.TNull) ||
		rt == at && (lt == at.ElemType() || lt == values.TNull)
	if !ok {
		return nil, pgerror.Newf(pgerror.CodeUndefinedFunction, "operator does not exist: %s || %s", lt, rt)
	}
	return &plantree.ArithExpr{Op: "||", L: l, R: r, T: at}, nil
}
