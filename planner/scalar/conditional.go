package scalar

import (
	"topicgate/planner/plantree"
	"topicgate/sql"
	"topicgate/sql/pgerror"
	"topicgate/sql/values"
)

// Conditional expressions: CASE, COALESCE and NULLIF, whose branches
// resolve to one type.

// bindCoalesce binds COALESCE(args...).
func (b *Binder) bindCoalesce(x *sql.Coalesce, want values.Type) (plantree.Expr, error) {
	var args []plantree.Expr
	var t values.Type
	_, err := b.noSRF("COALESCE", func() (e plantree.Expr, err error) {
		args, t, err = b.BindCommon(x.Args, want, "COALESCE")
		return nil, err
	})
	if err != nil {
		return nil, err
	}
	return &plantree.CoalesceExpr{Args: args, T: t}, nil
}

// bindNullIf binds NULLIF(a, b) as CASE WHEN a = b THEN NULL ELSE a END.
func (b *Binder) bindNullIf(x *sql.NullIf, want values.Type) (plantree.Expr, error) {
	args, t, err := b.BindCommon([]sql.Expr{x.A, x.B}, want, "NULLIF")
	if err != nil {
		return nil, err
	}
	return &plantree.CaseExpr{Whens: []plantree.CaseWhen{{Cond: &plantree.CmpExpr{Op: "=", L: args[0], R: args[1]}, Result: &plantree.ConstExpr{T: t}}}, Else: args[0], T: t}, nil
}

// BindCommon binds the branches of CASE, COALESCE or NULLIF (what) to one
// type, as PostgreSQL resolves them: the first typed branch sets it (want
// only when every branch is an untyped literal or parameter), numeric
// branches widen to the widest, untyped ones are read as it, and other
// mixtures are 42804.
func (b *Binder) BindCommon(args []sql.Expr, want values.Type, what string) ([]plantree.Expr, values.Type, error) {
	out := make([]plantree.Expr, len(args))
	t := values.TUnknown
	for i, a := range args {
		hint := t
		if hint == values.TUnknown {
			hint = want
		}
		var err error
		if out[i], err = b.Bind(a, hint); err != nil {
			return nil, 0, err
		}
		if IsUntyped(out[i]) {
			continue
		}
		switch at := out[i].Type(); {
		case t == values.TUnknown:
			t = at
		case at != t && at.IsNumeric() && t.IsNumeric():
			t = max(plantree.RankOf(at), plantree.RankOf(t)).Type()
		case (at == values.TDate || at == values.TTimestamptz) && (t == values.TDate || t == values.TTimestamptz):
			t = values.TTimestamptz
		case at != t && !(at.IsText() && t.IsText()):
			return nil, 0, pgerror.Newf(pgerror.CodeDatatypeMismatch, "%s types %s and %s cannot be matched", what, t, at)
		}
	}
	if t == values.TUnknown {
		if t = want; t == values.TUnknown || t == values.TNull {
			t = values.TText
		}
	}
	for i := range out {
		var err error
		if IsUntyped(out[i]) {
			out[i], err = Coerce(out[i], t)
		} else if out[i].Type() != t {
			out[i] = &plantree.CastExpr{X: out[i], T: t}
		}
		if err != nil {
			return nil, 0, err
		}
	}
	return out, t, nil
}

// bindCase binds CASE [arg] WHEN ... THEN ... [ELSE ...] END: a WHEN
// of a CASE with an argument is arg = value.
func (b *Binder) bindCase(x *sql.Case, want values.Type) (plantree.Expr, error) {
	var arg plantree.Expr
	var err error
	if x.Arg != nil {
		if arg, err = b.Bind(x.Arg, values.TUnknown); err != nil {
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
	bound, t, err := b.BindCommon(results, want, "CASE")
	if err != nil {
		return nil, err
	}
	if x.Else != nil { // back to WHENs..., ELSE
		bound = append(bound[1:], bound[0])
	}
	out := &plantree.CaseExpr{T: t}
	for i, w := range x.Whens {
		var cond plantree.Expr
		if arg != nil {
			v, err := b.Bind(w.Cond, arg.Type())
			if err != nil {
				return nil, err
			}
			cond = &plantree.CmpExpr{Op: "=", L: arg, R: v}
		} else if cond, err = b.Bind(w.Cond, values.TBool); err != nil {
			return nil, err
		}
		out.Whens = append(out.Whens, plantree.CaseWhen{Cond: cond, Result: bound[i]})
	}
	if x.Else != nil {
		out.Else = bound[len(bound)-1]
	}
	return out, nil
}
