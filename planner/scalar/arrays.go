package scalar

import (
	"topicgate/planner/plantree"
	"topicgate/sql"
	"topicgate/sql/pgerror"
	"topicgate/sql/values"
)

// Arrays: ARRAY[...] and '{...}' literals, and subscripts.

// bindArray binds ARRAY[...] or an array literal's elements to type elem:
// when elem is unknown, the first typed element's, else text.
func (b *Binder) bindArray(x *sql.ArrayLit, elem values.Type) (plantree.Expr, error) {
	elems := make([]plantree.Expr, len(x.Elems))
	for i, e := range x.Elems {
		var err error
		if elems[i], err = b.Bind(e, elem); err != nil {
			return nil, err
		}
		if elem == values.TUnknown && !IsUntyped(elems[i]) { // ARRAY['a', NULL]: the first typed element's type
			elem = elems[i].Type()
		}
	}
	if elem == values.TUnknown || elem == values.TNull {
		elem = values.TText
	}
	at := values.ArrayOf(elem)
	// An element type without an array type of its own (date, timestamptz,
	// numeric, ...) makes a text[]: its elements are cast to text here, so
	// the array holds what its type says (array_to_string, the wire).
	asText := at == values.TTextArray && !elem.IsText()
	for i, e := range elems {
		if IsUntyped(e) {
			var err error
			if elems[i], err = Coerce(e, elem); err != nil {
				return nil, pgerror.At(err, sql.ExprPos(x.Elems[i]))
			}
		}
		if asText && elems[i].Type() != values.TNull {
			elems[i] = &plantree.CastExpr{X: elems[i], T: values.TText}
		}
	}
	return &plantree.ArrayExpr{Elems: elems, T: at}, nil
}

// bindSubscript binds arr[i], an element of the array's type.
func (b *Binder) bindSubscript(x *sql.Subscript) (plantree.Expr, error) {
	arr, err := b.Bind(x.X, values.TUnknown)
	if err != nil {
		return nil, err
	}
	et := arr.Type().ElemType()
	if et == values.TUnknown {
		return nil, pgerror.Newf(pgerror.CodeDatatypeMismatch, "cannot subscript type %s because it does not support subscripting", arr.Type())
	}
	idx, err := b.Bind(x.Index, values.TInt4)
	if err != nil {
		return nil, err
	}
	if IsUntyped(idx) {
		if idx, err = Coerce(idx, values.TInt4); err != nil {
			return nil, err
		}
	}
	if !idx.Type().IsInt() && idx.Type() != values.TNull {
		return nil, pgerror.Newf(pgerror.CodeDatatypeMismatch, "array subscript must have type integer")
	}
	return &plantree.SubscriptExpr{X: arr, Index: idx, T: et}, nil
}
