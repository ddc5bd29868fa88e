package planner

import (
	"topicgate/sql"
	"topicgate/sql/pgerror"
)

// Conditional expressions: CASE, COALESCE and NULLIF, whose branches
// resolve to one type.

// bindCoalesce binds COALESCE(args...).
func (b *binder) bindCoalesce(x *sql.Coalesce, want Type) (Expr, error) {
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
}

// bindNullIf binds NULLIF(a, b) as CASE WHEN a = b THEN NULL ELSE a END.
func (b *binder) bindNullIf(x *sql.NullIf, want Type) (Expr, error) {
	args, t, err := b.bindCommon([]sql.Expr{x.A, x.B}, want, "NULLIF")
	if err != nil {
		return nil, err
	}
	return &CaseExpr{Whens: []CaseWhen{{Cond: &CmpExpr{Op: "=", L: args[0], R: args[1]}, Result: &ConstExpr{T: t}}}, Else: args[0], T: t}, nil
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

// bindCase binds CASE [arg] WHEN ... THEN ... [ELSE ...] END: a WHEN
// of a CASE with an argument is arg = value.
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
