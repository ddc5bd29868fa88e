// Package pgerror defines the user-facing error type of topicgate: an error
// that carries a PostgreSQL SQLSTATE code. Every error a client can cause is
// built with New (or Newf) and one of the codes below; anything else that
// reaches the wire layer is reported as an internal error (XX000).
//
// The wire package does not import this package: it recognises any error
// with a SQLState() method, so the protocol layer stays independent of the
// SQL layers.
package pgerror

import (
	"errors"
	"fmt"
)

// SQLSTATE codes used by topicgate.
const (
	CodeSuccessfulCompletion         = "00000"
	CodeWarning                      = "01000"
	CodeFeatureNotSupported          = "0A000"
	CodeCannotConnectNow             = "57P03"
	CodeInvalidParameterValue        = "22023"
	CodeInvalidRegularExpression     = "2201B"
	CodeDataException                = "22000"
	CodeNumericValueOutOfRange       = "22003"
	CodeDivisionByZero               = "22012"
	CodeInvalidArgumentForLog        = "2201E"
	CodeInvalidArgumentForPower      = "2201F"
	CodeInvalidRowCountInLimit       = "2201W"
	CodeInvalidRowCountInOffset      = "2201X"
	CodeInvalidTextRepresentation    = "22P02"
	CodeInvalidBinaryRepresentation  = "22P03"
	CodeBadCopyFileFormat            = "22P04"
	CodeStringDataRightTruncation    = "22001"
	CodeInvalidDatetimeFormat        = "22007"
	CodeNullValueNotAllowed          = "22004"
	CodeInvalidFrameOffset           = "22013" // invalid_preceding_or_following_size
	CodeInvalidNthValueArgument      = "22016" // invalid_argument_for_nth_value_function
	CodeInvalidEscapeSequence        = "22025"
	CodeNotNullViolation             = "23502"
	CodeCheckViolation               = "23514"
	CodeInvalidTransactionState      = "25000"
	CodeActiveSQLTransaction         = "25001"
	CodeReadOnlySQLTransaction       = "25006"
	CodeNoActiveSQLTransaction       = "25P01"
	CodeCantChangeRuntimeParam       = "55P02"
	CodeInvalidSavepointSpec         = "3B001"
	CodeInFailedSQLTransaction       = "25P02"
	CodeInvalidSQLStatementName      = "26000"
	CodeInvalidCursorName            = "34000"
	CodeInvalidPassword              = "28P01"
	CodeInvalidAuthorization         = "28000"
	CodeSerializationFailure         = "40001"
	CodeSyntaxError                  = "42601"
	CodeUndefinedColumn              = "42703"
	CodeUndefinedFunction            = "42883"
	CodeInvalidSchemaName            = "3F000"
	CodeUndefinedTable               = "42P01"
	CodeUndefinedObject              = "42704"
	CodeReservedName                 = "42939"
	CodeInvalidGrantOperation        = "0LP01"
	CodeUndefinedParameter           = "42P02"
	CodeDuplicateTable               = "42P07"
	CodeDuplicateObject              = "42710"
	CodeDuplicateColumn              = "42701"
	CodeDuplicateAlias               = "42712"
	CodeCardinalityViolation         = "21000"
	CodeWindowingError               = "42P20"
	CodeInvalidRecursion             = "42P19"
	CodeDatatypeMismatch             = "42804"
	CodeAmbiguousColumn              = "42702"
	CodeAmbiguousFunction            = "42725"
	CodeIndeterminateDatatype        = "42P18"
	CodeInvalidColumnReference       = "42P10"
	CodeGroupingError                = "42803"
	CodeWrongObjectType              = "42809"
	CodeProgramLimitExceeded         = "54000"
	CodeTooManyConnections           = "53300"
	CodeQueryCanceled                = "57014"
	CodeAdminShutdown                = "57P01"
	CodeProtocolViolation            = "08P01"
	CodeTransactionResolutionUnknown = "08007"
	CodeInternal                     = "XX000"
	CodeDataCorrupted                = "XX001"
)

// Authorization SQLSTATEs (package authz).
const (
	CodeInsufficientPrivilege = "42501"
	CodeDependentObjects      = "2BP01" // dependent_objects_still_exist
	CodeObjectInUse           = "55006"
)

// Cursor SQLSTATEs (executor/cursor.go).
const (
	CodeDuplicateCursor              = "42P03"
	CodeObjectNotInPrerequisiteState = "55000"
)

// Error is an error with a SQLSTATE code, shown to the client as an
// ErrorResponse (or, with Severity NOTICE, as a NoticeResponse).
type Error struct {
	Code     string
	Message  string
	Detail   string
	Hint     string
	Position int // 1-based character position in the query, 0 if unknown
	// Where is the context of the error (PostgreSQL's "Where" field), e.g.
	// "COPY t, line 3, column data".
	Where string
}

func (e *Error) Error() string { return e.Message }

// SQLState returns the SQLSTATE code; the wire layer looks for this method.
func (e *Error) SQLState() string { return e.Code }

// ErrorDetail returns the DETAIL field for the wire layer.
func (e *Error) ErrorDetail() string { return e.Detail }

// ErrorHint returns the HINT field for the wire layer.
func (e *Error) ErrorHint() string { return e.Hint }

// At returns err with Position pos (1-based characters in the query) when
// it is an *Error without one; the innermost expression that fails names
// the position, as in PostgreSQL. err itself is not changed.
func At(err error, pos int) error {
	var e *Error
	if pos <= 0 || !errors.As(err, &e) || e.Position > 0 {
		return err
	}
	cp := *e
	cp.Position = pos
	return &cp
}

// ErrorWhere returns the context (Where field) for the wire layer.
func (e *Error) ErrorWhere() string { return e.Where }

// ErrorPosition returns the 1-based query position for the wire layer.
func (e *Error) ErrorPosition() int { return e.Position }

// New returns an Error with the given code and message.
func New(code, msg string) *Error { return &Error{Code: code, Message: msg} }

// Newf returns an Error with the given code and a formatted message.
func Newf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// WithHint returns e with its hint set.
func (e *Error) WithHint(h string) *Error { e.Hint = h; return e }

// WithDetail returns e with its detail set.
func (e *Error) WithDetail(d string) *Error { e.Detail = d; return e }

// Code returns err's SQLSTATE, or CodeInternal if err carries none.
func Code(err error) string {
	var s interface{ SQLState() string }
	if errors.As(err, &s) {
		return s.SQLState()
	}
	return CodeInternal
}

// AssertionFailed builds the error for an internal invariant violation. It is
// a bug in topicgate, never a user error.
func AssertionFailed(format string, args ...any) *Error {
	return &Error{Code: CodeInternal, Message: "internal error: " + fmt.Sprintf(format, args...)}
}
