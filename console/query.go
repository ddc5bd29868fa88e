package console

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"topicgate/sql/pgerror"
	"topicgate/wire"
)

// Sessions opens in-process SQL sessions: the executor's Engine, the same
// wire.Handler the PostgreSQL port hands its connections to.
type Sessions interface {
	NewSession(ctx context.Context, info wire.SessionInfo) (wire.Session, error)
}

// firstPID is the process id of the console's first SQL session. The
// wire server numbers its connections from a random value below 2^23,
// the Kafka door's are negative; the console's count up from 2^30, so
// the three never meet in sys.sessions or pg_cancel_backend.
const firstPID = 1 << 30

// pids numbers the console's sessions.
var pids atomic.Uint32

func nextPID() uint32 { return firstPID + pids.Add(1) }

// sqlConn is one in-process session, as the logged-in role, for the
// statements of one HTTP request; close it when the request is done.
type sqlConn struct {
	s wire.Session
}

// open starts a session as user: the engine runs its login checks (LOGIN,
// CONNECTION LIMIT) as for a connection of the PostgreSQL port.
func (c *Console) open(ctx context.Context, user, remote string) (*sqlConn, error) {
	s, err := c.cfg.Sessions.NewSession(ctx, wire.SessionInfo{User: user, Database: "postgres", RemoteAddr: remote,
		Params:    map[string]string{"application_name": "topicgate console", "user": user, "database": "postgres"},
		ProcessID: nextPID()})
	if err != nil {
		return nil, err
	}
	return &sqlConn{s: s}, nil
}

func (sc *sqlConn) close() { sc.s.Close() }

// result is what one statement returned: column names and rows of the
// wire package's value representations.
type result struct {
	Cols []string
	Rows [][]any
	// Tag is the command tag ("SELECT 3", "DELETE 1"); Notices are the
	// NOTICEs and WARNINGs the statement sent, as psql would show them.
	Tag     string
	Notices []string
	// Done is false when queryMax stopped at its bound with rows left.
	Done bool
}

// query runs one statement with $n parameters (int64 or string) in an
// implicit transaction of its own, as the extended protocol does.
func (sc *sqlConn) query(ctx context.Context, q string, args ...any) (res *result, err error) {
	return sc.queryMax(ctx, 0, q, args...)
}

// queryMax is query returning at most maxRows rows (0: all); Done is
// false when more remained.
func (sc *sqlConn) queryMax(ctx context.Context, maxRows int, q string, args ...any) (res *result, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("internal error: %v", p)
		}
	}()
	oids := make([]uint32, len(args))
	for i, a := range args {
		switch a.(type) {
		case int64:
			oids[i] = wire.OIDInt8
		case string:
			oids[i] = wire.OIDText
		default:
			return nil, fmt.Errorf("console: parameter $%d of type %T", i+1, a)
		}
	}
	out := &rowsOutput{}
	err = sc.run(ctx, q, oids, args, out, maxRows)
	if serr := sc.s.Sync(ctx, out); err == nil {
		err = serr
	}
	if b, ok := sc.s.(wire.DurabilityBarrier); ok && err == nil {
		// As the PostgreSQL port does before results leave: an ack the
		// page reports is synced.
		err = b.WaitDurable()
	}
	if err != nil {
		return nil, err
	}
	return &out.res, nil
}

func (sc *sqlConn) run(ctx context.Context, q string, oids []uint32, args []any, out *rowsOutput, maxRows int) error {
	stmts, err := sc.s.Parse(ctx, q, oids)
	if err != nil {
		return err
	}
	if len(stmts) != 1 {
		// As PostgreSQL's extended protocol answers it.
		return pgerror.New(pgerror.CodeSyntaxError, "cannot insert multiple commands into a prepared statement")
	}
	p, err := stmts[0].Bind(ctx, args)
	if err != nil {
		return err
	}
	defer p.Close()
	for _, c := range p.Columns() {
		out.res.Cols = append(out.res.Cols, c.Name)
	}
	out.res.Tag, out.res.Done, err = p.Execute(ctx, out, maxRows)
	return err
}

// rowsOutput is a wire.Output that keeps the rows.
type rowsOutput struct {
	res result
}

var errNoCopy = errors.New("console: COPY is not run from the console")

func (o *rowsOutput) WriteRow(vals []any) error {
	row := make([]any, len(vals))
	for i, v := range vals {
		if b, ok := v.([]byte); ok {
			v = append([]byte(nil), b...) // may be the store's memory
		}
		row[i] = v
	}
	o.res.Rows = append(o.res.Rows, row)
	return nil
}

// RowEncoder offers streaming consumer reads an encoder; the console
// offers none (its only consumer read is a shared consumer's, which
// writes rows), so every row comes through WriteRow.
func (o *rowsOutput) RowEncoder() *wire.RowEncoder { return nil }

func (o *rowsOutput) WriteRows(*wire.RowEncoder) error {
	return errors.New("console: encoded rows are not expected")
}

func (o *rowsOutput) Flush() error                                { return nil }
func (o *rowsOutput) Notice(_, msg string)                        { o.res.Notices = append(o.res.Notices, msg) }
func (o *rowsOutput) Warning(_, msg string)                       { o.res.Notices = append(o.res.Notices, msg) }
func (o *rowsOutput) CopyIn(int16, int) (wire.CopyReader, error)  { return nil, errNoCopy }
func (o *rowsOutput) CopyOut(int16, int) (wire.CopyWriter, error) { return nil, errNoCopy }
