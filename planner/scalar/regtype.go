package scalar

import (
	"topicgate/planner/catalog"
	"topicgate/planner/plantree"
	"topicgate/sql"
	"topicgate/sql/values"
)

// bindRegtypeCast binds the casts that involve regtype, which topicgate
// runs as oid: 'name'::regtype resolves the name (42704 if no such type),
// and x::regtype::text names the type as regtypeout does (regtypeText).
// ok is false for any other cast.
func (b *Binder) bindRegtypeCast(x *sql.Cast) (e plantree.Expr, ok bool, err error) {
	if x.Type == "regtype" {
		if c, isConst := x.X.(*sql.Const); isConst {
			if c.Lit.Kind == sql.LitString {
				oid, err := catalog.RegtypeOID(c.Lit.Str)
				if err != nil {
					return nil, true, err
				}
				return &plantree.ConstExpr{V: oid, T: values.TOid}, true, nil
			}
		}
		return nil, false, nil
	}
	inner, isCast := x.X.(*sql.Cast)
	if !isCast || inner.Type != "regtype" || (x.Type != "text" && x.Type != "varchar" && x.Type != "name") {
		return nil, false, nil
	}
	t, _ := values.TypeFromName(x.Type)
	e, err = b.regtypeText(inner, t)
	return e, true, err
}

// regtypeText binds x::regtype::t for a text type t: a regtype prints as
// the type's name (asyncpg's introspection reads elemtype::regtype::text),
// where regtype is otherwise an oid here.
func (b *Binder) regtypeText(x *sql.Cast, t values.Type) (plantree.Expr, error) {
	oid, err := b.Bind(x, values.TUnknown)
	if err != nil {
		return nil, err
	}
	var out plantree.Expr = &plantree.FuncExpr{Name: "regtypeout", Args: []plantree.Expr{oid}, T: values.TText, Fn: catalog.Builtins["regtypeout"]}
	if t != values.TText {
		out = &plantree.CastExpr{X: out, T: t}
	}
	return out, nil
}
