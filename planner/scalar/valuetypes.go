package scalar

import "topicgate/sql/values"

// Type and its constants are the values package's (sql/values owns types,
// parsing, formatting and casts). They are aliased here, not re-declared,
// because typing names them everywhere, as package planner and plantree
// do (they alias them too): scalar.Type, planner.Type, plantree.Type and
// values.Type are the same type. Everything else of values (ParseText,
// TypeFromName, ArrayOf, the numeric functions) this package calls as
// values.X.
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
