package scalar

import (
	"topicgate/planner/catalog"
	"topicgate/planner/plantree"
	"topicgate/sql"
	"topicgate/sql/pgerror"
	"topicgate/sql/values"
)

// bindLike binds LIKE, ILIKE, their negations and the regular expression
// matches (op is ~~, ~~*, !~~, !~~*, ~, ~*, !~ or !~*) with PostgreSQL's
// operators: text ~~ text (char and name read as text), and bytea ~~
// bytea and bytea !~~ bytea; an untyped side takes the other's type, two
// take text. LIKE p ESCAPE e arrives as the pattern like_escape(p, e),
// resolved on its own arguments as PostgreSQL does.
func (b *Binder) bindLike(x *sql.BinOp, op string) (plantree.Expr, error) {
	l, err := b.Bind(x.L, values.TUnknown)
	if err != nil {
		return nil, err
	}
	var r plantree.Expr
	if f, ok := x.R.(*sql.FuncCall); ok && f.Name == "like_escape" && len(f.Args) == 2 && f.Over == nil && f.Filter == nil && len(f.Order) == 0 && !f.Star && !f.Distinct {
		r, err = b.bindLikeEscape(f)
	} else {
		r, err = b.Bind(x.R, values.TUnknown)
	}
	if err != nil {
		return nil, err
	}
	t, ok := likeType(op == "~~" || op == "!~~", l, r)
	if !ok {
		return nil, pgerror.Newf(pgerror.CodeUndefinedFunction, "operator does not exist: %s %s %s", argTypeName(l), op, argTypeName(r)).
			WithHint("No operator matches the given name and argument types. You might need to add explicit type casts.")
	}
	for i, e := range []*plantree.Expr{&l, &r} {
		if IsUntyped(*e) {
			if *e, err = Coerce(*e, t); err != nil {
				return nil, pgerror.At(err, sql.ExprPos([]sql.Expr{x.L, x.R}[i]))
			}
		}
	}
	return &plantree.CmpExpr{Op: op, L: l, R: r}, nil
}

// bindLikeEscape binds like_escape(pattern, escape): text, or bytea when
// an argument is (an untyped one takes the other's type).
func (b *Binder) bindLikeEscape(f *sql.FuncCall) (plantree.Expr, error) {
	args := make([]plantree.Expr, 2)
	for i, a := range f.Args {
		var err error
		if args[i], err = b.Bind(a, values.TUnknown); err != nil {
			return nil, err
		}
	}
	t, ok := likeType(true, args[0], args[1])
	if !ok {
		return nil, undefinedFunc("like_escape", []string{argTypeName(args[0]), argTypeName(args[1])})
	}
	for i := range args {
		if IsUntyped(args[i]) {
			var err error
			if args[i], err = Coerce(args[i], t); err != nil {
				return nil, err
			}
		}
	}
	return &plantree.FuncExpr{Name: "like_escape", Args: args, T: t, Fn: catalog.Builtins["like_escape"]}, nil
}

// likeType is the type two LIKE operands compare as: text, or bytea when
// bytes (LIKE, not ILIKE) allows it; ok false when no operator takes them.
func likeType(bytes bool, l, r plantree.Expr) (values.Type, bool) {
	t := values.TUnknown
	for _, e := range []plantree.Expr{l, r} {
		if IsUntyped(e) || e.Type() == values.TNull {
			continue
		}
		et := e.Type()
		switch {
		case et.IsText():
			et = values.TText
		case et == values.TBytea && bytes:
		default:
			return 0, false
		}
		if t != values.TUnknown && t != et {
			return 0, false
		}
		t = et
	}
	if t == values.TUnknown {
		t = values.TText
	}
	return t, true
}
