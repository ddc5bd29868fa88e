package planner

import "topicgate/sql/values"

// Type and its constants are the values package's (sql/values owns types,
// parsing, formatting and casts). They are aliased here, not re-declared,
// because the planner names them in hundreds of places, as plantree's
// plan structs do (plantree aliases them too; scalar names values.Type): planner.Type,
// plantree.Type and values.Type are the same type, so code outside may use
// any, and the executor uses values directly. Everything else of values (ParseText,
// Convert, FormatText, the numeric functions) the planner calls as values.X.
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
