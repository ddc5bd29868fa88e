package pgvalue

// Error is the SQLSTATE-carrying error of a value that does not encode or
// decode, with the fields of PostgreSQL's ErrorResponse it may fill. The
// wire layer sends it as it sends any error with SQLState(); Where (the
// context line, e.g. the Bind parameter) is for the caller to set.
type Error struct {
	Code    string
	Message string
	Detail  string
	Hint    string
	Where   string
}

func (e *Error) Error() string       { return e.Message }
func (e *Error) SQLState() string    { return e.Code }
func (e *Error) ErrorDetail() string { return e.Detail }
func (e *Error) ErrorHint() string   { return e.Hint }
func (e *Error) ErrorWhere() string  { return e.Where }

func newError(code, msg string) *Error { return &Error{Code: code, Message: msg} }
