package wire

import (
	"context"
	"time"

	"topicgate/sql/values"
	"topicgate/wire/pgvalue"
)

// This file is the contract between the protocol layer and the engine that
// runs statements (the executor). The wire package implements the
// PostgreSQL v3 protocol and calls these interfaces; it knows nothing of
// topics, SQL or storage.

// Well-known type OIDs the wire layer can encode and decode: the values
// package's (one list of PostgreSQL's type OIDs), named here for the
// protocol code.
const (
	OIDBool        = values.OIDBool
	OIDBytea       = values.OIDBytea
	OIDName        = values.OIDName
	OIDInt8        = values.OIDInt8
	OIDInt2        = values.OIDInt2
	OIDInt4        = values.OIDInt4
	OIDText        = values.OIDText
	OIDOid         = values.OIDOid
	OIDJSON        = values.OIDJSON
	OIDFloat4      = values.OIDFloat4
	OIDFloat8      = values.OIDFloat8
	OIDUnknown     = values.OIDUnknown
	OIDBoolArray   = values.OIDBoolArray
	OIDInt2Array   = values.OIDInt2Array
	OIDInt4Array   = values.OIDInt4Array
	OIDTextArray   = values.OIDTextArray
	OIDInt8Array   = values.OIDInt8Array
	OIDOidArray    = values.OIDOidArray
	OIDBpchar      = values.OIDBpchar
	OIDVarchar     = values.OIDVarchar
	OIDDate        = values.OIDDate
	OIDTimestamp   = values.OIDTimestamp
	OIDTimestamptz = values.OIDTimestamptz
	OIDInterval    = values.OIDInterval
	OIDNumeric     = values.OIDNumeric
	OIDUUID        = values.OIDUUID
	OIDJSONB       = values.OIDJSONB
	OIDChar        = values.OIDChar
)

// Column describes one result column (RowDescription field).
type Column struct {
	Name    string
	TypeOID uint32
	// TypeSize and TypeMod follow PostgreSQL's conventions; 0 means "derive
	// from the OID" (the wire layer fills the usual sizes).
	TypeSize int16
	TypeMod  int32
}

// Value representations the wire layer encodes, by column type OID. A row
// is a []any with one of these per column, or nil for NULL:
//
//	bool                 bool
//	int2/int4/int8/oid   int64 (int32 and int also accepted)
//	float4/float8        float64
//	numeric              string (decimal text) or int64 / float64
//	text/varchar/name    string or []byte
//	bytea                []byte
//	json/jsonb           []byte or string holding JSON text
//	timestamptz          time.Time
//	timestamp            time.Time (wall clock, no zone)
//	date                 time.Time (the date of its UTC instant)
//	interval             time.Duration or wire.Interval
//	arrays (int8[], text[], int4[], bool[])  []int64, []string, []bool, []any
//
// Decoded Bind parameters use the same representations: the wire layer
// decodes each parameter by the statement's parameter OID (text or binary
// format); a parameter of OID 0/unknown arrives as string (text format) or
// []byte (binary format), untouched.

// Interval is a PostgreSQL interval with months and days kept apart, the
// representation of an interval value (the type is wire/pgvalue's, which
// encodes and decodes it).
type Interval = pgvalue.Interval

// SessionInfo is what the client sent at startup, after authentication.
type SessionInfo struct {
	User       string
	Database   string
	Params     map[string]string // every startup parameter, e.g. application_name, TimeZone
	RemoteAddr string
	// ProcessID is the BackendKeyData process id of this connection.
	ProcessID uint32
}

// Handler creates one Session per client connection.
type Handler interface {
	// NewSession is called after successful authentication. Params returned by
	// the session's ParameterStatus are sent to the client.
	NewSession(ctx context.Context, info SessionInfo) (Session, error)
}

// Session is one client connection's engine state. The wire layer calls it
// from a single goroutine (the connection's), never concurrently, except for
// nothing: cancellation comes through the ctx passed to Execute.
type Session interface {
	// ParameterStatus returns the ParameterStatus values to send at startup.
	ParameterStatus() map[string]string

	// Parse parses query text into statements. The simple query protocol
	// executes every statement returned; the extended protocol requires at
	// most one (zero for an empty query). paramOIDs are the types the client
	// declared in Parse (0 = unspecified); the Statement reports the final
	// ones.
	Parse(ctx context.Context, query string, paramOIDs []uint32) ([]Statement, error)

	// TxStatus returns the ReadyForQuery status: 'I' idle, 'T' in a
	// transaction block, 'E' in a failed transaction block.
	TxStatus() byte

	// Sync is called after the last statement of a simple Query message
	// (and at Sync in the extended protocol): implicit transactions end
	// here. out takes the notices their commit reports (no rows).
	Sync(ctx context.Context, out Output) error

	// Close releases the session (connection closed). An open transaction
	// rolls back.
	Close()
}

// ParamStatus is one ParameterStatus message.
type ParamStatus struct{ Name, Value string }

// ParameterReporter is optionally implemented by a Session whose reported
// parameters change after startup (SET, RESET, a ROLLBACK that undoes a
// SET): before each ReadyForQuery the connection sends what
// ParameterChanges returns, as PostgreSQL 14 and later do.
type ParameterReporter interface {
	ParameterChanges() []ParamStatus
}

// CursorPortals is optionally implemented by a Session with SQL cursors
// (DECLARE): in PostgreSQL cursors and protocol portals share one
// namespace, so a Describe or Execute of a portal name the connection did
// not bind looks for a cursor of that name (psycopg 3 describes its named
// cursors that way). The cursor stays the session's: closing the
// connection's portals does not close it.
type CursorPortals interface {
	CursorPortal(name string) (Portal, bool)
}

// PortalUser is optionally implemented by a Session whose SQL FETCH and
// MOVE may name a protocol portal the connection bound (the other half of
// the shared namespace; asyncpg's Cursor.forward sends MOVE so). The
// connection hands it the lookup once, after NewSession; the lookup is
// only called on the connection's goroutine, during a statement.
type PortalUser interface {
	UsePortals(lookup func(name string) (Portal, bool))
}

// TxFailer is optionally implemented by a Session with transaction
// blocks: an error the connection reports itself (a Bind whose portal name
// is taken, a malformed message) fails the open block, as any statement
// error does in PostgreSQL.
type TxFailer interface {
	FailTx()
}

// Pipeliner is optionally implemented by a Session that runs the
// extended-protocol statements up to Sync in one implicit transaction, as
// PostgreSQL does (a pgx Batch, a psycopg pipeline, a JDBC batch): an
// error in one of them rolls back what the earlier ones wrote.
//
// The connection calls Pipelined before each Execute message runs. A
// Portal's Execute may then return the tag TagDeferred: the statement ran,
// but whether it commits at once or joins a transaction with the
// statements after it depends on the client's next message. When that
// message arrives the connection calls DeferredTag, before handling it,
// with atSync telling whether it is Sync, and sends the CommandComplete
// (or the error) DeferredTag returns. A connection that ends instead
// calls neither: Close drops the deferred statement, uncommitted, as
// PostgreSQL aborts an implicit transaction whose client left before Sync.
// The backend messages the client sees are those PostgreSQL sends, in the
// same order: nothing reaches the client between an Execute and the next
// message's handling without a Flush or Sync, and both resolve the tag
// first.
type Pipeliner interface {
	Pipelined()
	DeferredTag(ctx context.Context, out Output, atSync bool) (string, error)
}

// TagDeferred is the command tag a Portal returns for a statement whose
// completion waits for the next message (see Pipeliner).
const TagDeferred = "\x00deferred"

// IdleTimeouter is optionally implemented by a Session that ends idle
// connections: IdleTimeout returns how long the connection may wait for
// the client's next message in transaction status st ('I', 'T', 'E'); 0 is
// no limit. Past it the connection closes with PostgreSQL's FATAL (57P05
// idle, 25P03 in a transaction).
type IdleTimeouter interface {
	IdleTimeout(st byte) time.Duration
}

// DurabilityBarrier is optionally implemented by a Session whose results
// may be decided before they are durable (pipelined acknowledgements).
// The connection calls WaitDurable before any output reaches the socket,
// so no client ever sees a confirmation that a crash could take back; an
// error closes the connection.
type DurabilityBarrier interface {
	WaitDurable() error
}

// Statement is a prepared statement.
type Statement interface {
	// ParamTypes returns one OID per $n parameter, counting exactly the $n
	// the statement uses (the highest n).
	ParamTypes() []uint32
	// Columns describes the result rows; nil for statements that return no
	// rows (NoData).
	Columns() []Column
	// Bind creates a portal with decoded parameter values.
	Bind(ctx context.Context, params []any) (Portal, error)
}

// Portal is a bound statement ready to run. Execute may be called several
// times when the client asks for a row limit: each call continues where the
// previous one stopped.
type Portal interface {
	// Columns describes the result rows (as Statement.Columns).
	Columns() []Column
	// Execute runs or resumes the portal, writing rows to out. maxRows 0
	// means no limit. It returns done=false when it stopped because maxRows
	// rows were written and more remain (PortalSuspended); otherwise it
	// returns the command tag ("SELECT 3", "INSERT 0 5", "CREATE TOPIC").
	Execute(ctx context.Context, out Output, maxRows int) (tag string, done bool, err error)
	// Close releases the portal's resources. It may be called before the
	// portal is finished.
	Close()
}

// Output receives what a portal produces.
type Output interface {
	// WriteRow sends one DataRow. vals has one element per column; the slice
	// may be reused by the caller after WriteRow returns.
	WriteRow(vals []any) error
	// RowEncoder returns an empty encoder of DataRows in this result's
	// column types and formats, for rows built before they are sent.
	RowEncoder() *RowEncoder
	// WriteRows sends the complete rows held by e, in order.
	WriteRows(e *RowEncoder) error
	// Flush sends everything written so far to the client. An error means
	// the rows may not have reached it: the connection is lost (a hangup
	// watch saw the client go, or the socket write failed).
	Flush() error
	// Notice sends a NoticeResponse (severity NOTICE) now.
	Notice(code, msg string)
	// Warning sends a NoticeResponse with severity WARNING now.
	Warning(code, msg string)
	// CopyIn switches the connection into COPY FROM STDIN mode: it sends
	// CopyInResponse with the given column count and format (0 text, 1
	// binary) and returns a reader of the CopyData payload. The reader
	// returns io.EOF at CopyDone; at CopyFail it returns an error carrying
	// SQLSTATE 57014 and the client's message. The portal must read until
	// an error or io.EOF.
	CopyIn(format int16, columns int) (CopyReader, error)
	// CopyOut switches the connection into COPY TO STDOUT mode: it sends
	// CopyOutResponse with the column count and format (0 text, 1 binary)
	// and returns the writer of CopyData; the portal calls Done before it
	// returns its tag.
	CopyOut(format int16, columns int) (CopyWriter, error)
}

// CopyReader yields the bytes of a COPY FROM STDIN stream.
type CopyReader interface {
	// Next returns the payload of the next CopyData message (valid until the
	// next call), or io.EOF after CopyDone.
	Next() ([]byte, error)
}

// Clock is the time source; tests inject a fake.
type Clock func() time.Time
