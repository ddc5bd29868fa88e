package wire

import (
	"errors"

	"github.com/jackc/pgx/v5/pgproto3"
)

// protoError is the wire layer's own SQLSTATE-carrying error (protocol errors,
// authentication); a value that does not encode or decode is a
// pgvalue.Error, sent the same way. Engine errors need only implement
// SQLState() string, and optionally ErrorDetail, ErrorHint, ErrorPosition
// and ErrorWhere (the context line, PostgreSQL's "Where" field, e.g.
// "COPY t, line 3").
type protoError struct {
	Code    string
	Message string
	Detail  string
	Hint    string
	Where   string
}

func (e *protoError) Error() string       { return e.Message }
func (e *protoError) SQLState() string    { return e.Code }
func (e *protoError) ErrorDetail() string { return e.Detail }
func (e *protoError) ErrorHint() string   { return e.Hint }
func (e *protoError) ErrorWhere() string  { return e.Where }

func newError(code, msg string) *protoError { return &protoError{Code: code, Message: msg} }

// toErrorResponse converts any error to an ErrorResponse (without severity).
func toErrorResponse(err error) *pgproto3.ErrorResponse {
	er := &pgproto3.ErrorResponse{Code: "XX000", Message: err.Error()}
	var st interface{ SQLState() string }
	if errors.As(err, &st) {
		if code := st.SQLState(); len(code) == 5 {
			er.Code = code
		}
	}
	var d interface{ ErrorDetail() string }
	if errors.As(err, &d) {
		er.Detail = d.ErrorDetail()
	}
	var h interface{ ErrorHint() string }
	if errors.As(err, &h) {
		er.Hint = h.ErrorHint()
	}
	var w interface{ ErrorWhere() string }
	if errors.As(err, &w) {
		er.Where = w.ErrorWhere()
	}
	var p interface{ ErrorPosition() int }
	if errors.As(err, &p) {
		if pos := p.ErrorPosition(); pos > 0 {
			er.Position = int32(pos)
		}
	}
	if er.Message == "" {
		er.Message = "unknown error"
	}
	return er
}
