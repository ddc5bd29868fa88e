package plantree

import "topicgate/sql/values"

// Type and its constants are the values package's (sql/values owns types,
// parsing, formatting and casts). They are aliased here, not re-declared,
// because the plan structs name them everywhere (Column.T, every Expr's
// Type()): plantree.Type, planner.Type and values.Type are the same type,
// so code outside may use any, and the executor uses values directly.
// Everything else of values this package calls as values.X.
type Type = values.Type

const (
	TUnknown     = values.TUnknown
	TNull        = values.TNull
	TBool        = values.TBool
	TInt2        = values.TInt2
	TInt4        = values.TInt4
	TInt8        = values.TInt8
	TFloat8      = values.TFloat8
	TNumeric     = values.TNumeric
	TText        = values.TText
	TBytea       = values.TBytea
	TJSONB       = values.TJSONB
	TJSON        = values.TJSON
	TTimestamptz = values.TTimestamptz
	TInterval    = values.TInterval
	TInt8Array   = values.TInt8Array
	TInt4Array   = values.TInt4Array
	TTextArray   = values.TTextArray
	TBoolArray   = values.TBoolArray
	TOid         = values.TOid
	TName        = values.TName
	TChar        = values.TChar
	TDate        = values.TDate
	TOidArray    = values.TOidArray
)

// NumericRank orders numeric types by width, for the common type of
// CASE/COALESCE branches, of an IN list and of a join key (RankOf;
// Type is the type of a rank).
type NumericRank int

// RankOf is t's rank (float8 for any type that is no narrower numeric).
func RankOf(t Type) NumericRank {
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

// Type is the numeric type of rank r.
func (r NumericRank) Type() Type {
	return [...]Type{TInt2, TInt2, TInt4, TInt8, TNumeric, TFloat8}[r]
}
