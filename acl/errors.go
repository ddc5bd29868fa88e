package acl

import (
	"errors"
	"fmt"
	"strings"
)

// Error is an error with PostgreSQL's SQLSTATE, message and detail, which
// the executor forwards to the client as they are.
type Error struct {
	Code, Message, Detail string
}

// Error returns the message, and the detail after it when there is one.
func (e *Error) Error() string {
	if e.Detail == "" {
		return e.Message
	}
	return e.Message + " (" + e.Detail + ")"
}

// Is makes errors.Is match two *Error values with the same code and
// message, so a caller can test errors.Is(err, ErrDependentPrivileges).
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code && t.Message == e.Message
}

// SQLSTATE codes this package returns.
const (
	CodeInsufficientPrivilege = "42501"
	CodeDuplicateObject       = "42710"
	CodeUndefinedObject       = "42704"
	CodeReservedName          = "42939"
	CodeInvalidGrantOperation = "0LP01"
	CodeDependentObjects      = "2BP01"
	CodeFeatureNotSupported   = "0A000"
	CodeObjectInUse           = "55006"
	CodeInvalidTextRep        = "22P02"
)

// ErrDependentPrivileges is REVOKE's refusal without CASCADE when the
// grantee granted onward what the revoke takes away (PostgreSQL: 2BP01
// "dependent privileges exist", hint "Use CASCADE to revoke them too.").
var ErrDependentPrivileges = errors.New("dependent privileges exist")

// DependentPrivilegesError is ErrDependentPrivileges as the client sees
// it; errors.Is(DependentPrivilegesError(), ErrDependentPrivileges) holds.
func DependentPrivilegesError() error {
	return &dependentError{&Error{Code: CodeDependentObjects, Message: "dependent privileges exist"}}
}

// dependentError is an *Error that also matches ErrDependentPrivileges.
type dependentError struct{ e *Error }

func (e *dependentError) Error() string { return e.e.Message }

// Is matches ErrDependentPrivileges.
func (e *dependentError) Is(target error) bool { return target == ErrDependentPrivileges }

// Unwrap gives the *Error, so errors.As finds the SQLSTATE.
func (e *dependentError) Unwrap() error { return e.e }

// Hint is PostgreSQL's hint for ErrDependentPrivileges.
const HintDependentPrivileges = "Use CASCADE to revoke them too."

// ErrRoleExists returns 42710 role "name" already exists.
func ErrRoleExists(name string) *Error {
	return &Error{Code: CodeDuplicateObject, Message: fmt.Sprintf("role \"%s\" already exists", name)}
}

// ErrRoleNotFound returns 42704 role "name" does not exist.
func ErrRoleNotFound(name string) *Error {
	return &Error{Code: CodeUndefinedObject, Message: fmt.Sprintf("role \"%s\" does not exist", name)}
}

// ErrReservedName returns 42939 role name "name" is reserved, with the
// detail PostgreSQL gives for names starting with "pg_".
func ErrReservedName(name string) *Error {
	e := &Error{Code: CodeReservedName, Message: fmt.Sprintf("role name \"%s\" is reserved", name)}
	if IsReservedName(name) {
		e.Detail = "Role names starting with \"pg_\" are reserved."
	}
	return e
}

// denied returns 42501 with msg and the detail.
func denied(msg, detail string, args ...any) *Error {
	return &Error{Code: CodeInsufficientPrivilege, Message: msg, Detail: fmt.Sprintf(detail, args...)}
}

// IsReservedName reports whether name starts with "pg_", which CREATE ROLE
// and ALTER ROLE ... RENAME refuse.
func IsReservedName(name string) bool { return strings.HasPrefix(name, "pg_") }
