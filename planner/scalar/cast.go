package scalar

import (
	"topicgate/planner/catalog"
	"topicgate/planner/plantree"
	"topicgate/sql"
	"topicgate/sql/pgerror"
	"topicgate/sql/values"
)

// bindCast binds CAST(x AS t) and x::t: an untyped literal or parameter
// takes the type, 'name'::regclass and 'name'::regproc resolve the name to
// an oid, and casts involving regtype are bindRegtypeCast's.
func (b *Binder) bindCast(x *sql.Cast) (plantree.Expr, error) {
	if e, ok, err := b.bindRegtypeCast(x); ok {
		return e, err
	}
	t, ok := values.TypeFromName(x.Type)
	if !ok {
		// The position is the type name's, as PostgreSQL's.
		return nil, pgerror.At(pgerror.Newf(pgerror.CodeUndefinedObject, "type \"%s\" does not exist", x.Type), x.TypePos)
	}
	inner, err := b.Bind(x.X, values.TUnknown)
	if err != nil {
		return nil, err
	}
	if c, ok := inner.(*plantree.ConstExpr); ok && c.T == values.TUnknown {
		if str, isStr := c.V.(string); isStr && x.Type == "regclass" && b.env.Topics() != nil {
			oid, err := catalog.RegclassOID(b.env.Topics(), str) // 'name'::regclass names a relation
			if err != nil {
				return nil, err
			}
			return &plantree.ConstExpr{V: oid, T: values.TOid}, nil
		}
		if str, isStr := c.V.(string); isStr && x.Type == "regproc" {
			oid, err := catalog.RegprocOID(str) // 'name'::regproc names a function (psql's \sf)
			if err != nil {
				return nil, err
			}
			return &plantree.ConstExpr{V: oid, T: values.TOid}, nil
		}
		return Coerce(c, t)
	}
	if p, ok := inner.(*plantree.ParamExpr); ok && p.Type() == values.TUnknown {
		return Coerce(p, t)
	}
	return &plantree.CastExpr{X: inner, T: t}, nil
}

// bindCollate binds x COLLATE c: x must be text.
func (b *Binder) bindCollate(x *sql.Collate, want values.Type) (plantree.Expr, error) {
	inner, err := b.Bind(x.X, want)
	if err != nil {
		return nil, err
	}
	if IsUntyped(inner) {
		if inner, err = Coerce(inner, values.TText); err != nil {
			return nil, err
		}
	}
	if t := inner.Type(); !t.IsText() && t != values.TTextArray && t != values.TNull {
		return nil, pgerror.Newf(pgerror.CodeDatatypeMismatch, "collations are not supported by type %s", t)
	}
	return inner, nil // every collation topicgate accepts compares bytewise
}
