// Package values owns SQL values: the types (Type and its constants, their
// PostgreSQL OIDs and names), the text input of every type (ParseText and
// its parts: bytea, timestamptz, interval, jsonb, arrays), the text output
// (FormatText, FormatInterval, NumericText), the casts between types
// (Convert, NormalizeParam for bound parameters), dates and timestamps in
// a DateStyle other than the default (datestyle.go: ConvertIn, ParseTextIn,
// AppendDate, AppendTimestamp; the session passes its DateStyle in), COPY's binary fields
// (ParseBinary), ordering (Compare), the arithmetic operators (Arith,
// IntArith), and numeric's decimal arithmetic, rounding and keys
// (numeric.go). The planner uses it to type
// and fold constants, the executor to compute and format at run time.
//
// A value is a plain Go value: NULL is nil; bool; the integer types and oid
// int64; float8 float64; numeric *apd.Decimal (never mutated once built);
// text, name and "char" string; bytea []byte; json and jsonb their JSON
// text as a string (jsonb normalized); timestamptz time.Time; date a
// time.Time at 00:00 UTC; interval time.Duration; the arrays []int64,
// []string and []bool.
//
// Invariants: the package knows no plans, no storage and no SQL syntax
// tree (it imports neither planner, executor, topicstore nor sql); its
// functions are pure over Go values and types (no session, no clock, no
// global state besides constant tables); every user error it returns
// carries a SQLSTATE (pgerror).
package values
