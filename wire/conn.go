package wire

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
)

const writeBufSize = 64 << 10

// conn is one client connection. All its methods run on the connection's
// goroutine except cancelRunning.
type conn struct {
	s  *Server
	nc net.Conn
	bw *bufio.Writer
	be *pgproto3.Backend

	wbuf    []byte // scratch for encoding one message
	readErr error  // last error of the underlying reader (I/O, not protocol)
	// ending: Server.Terminate asked this connection to end as Shutdown
	// ends them all (FATAL 57P01).
	ending atomic.Bool

	pid    uint32
	secret [4]byte

	// ctx is the connection's context, a child of the server's: the
	// engine calls' context (cc) derives from it, so registering it
	// contends on this connection's lock, not on the server's.
	ctx context.Context
	cc  callCtx // the engine calls' (runCtx)

	paramFmts []int16 // a Bind's parameter formats (formatCodes), reused
	cancelMu  sync.Mutex
	cancelFn  context.CancelFunc

	info    SessionInfo
	sess    Session
	stmts   map[string]*prepared
	portals map[string]*portal

	raw syscall.RawConn // the plain TCP socket, for readNow; nil with TLS or before startup ends
	hup syscall.RawConn // the TCP socket, also under TLS, for the hangup watch (hangup.go)

	// hang watches for the client's hangup while a statement runs; gone
	// is set once a watch saw the client disconnect.
	hang hangup
	gone atomic.Bool

	ignoreTillSync bool
	// deferred is set while the last Execute's CommandComplete waits for
	// the next message (Pipeliner, pipeline.go).
	deferred bool
	fatal    bool // close after the current message
	dead     bool // a FATAL error was sent: send nothing more
	out      output
}

// barrierWriter is what the buffered writer writes to: the socket, behind
// the session's durability barrier (see DurabilityBarrier), whatever makes
// the buffer go out (ReadyForQuery, Flush, a full buffer, a blocking read).
type barrierWriter struct{ c *conn }

func (w barrierWriter) Write(p []byte) (int, error) {
	if b, ok := w.c.sess.(DurabilityBarrier); ok {
		if err := b.WaitDurable(); err != nil {
			return 0, err
		}
	}
	return w.c.nc.Write(p)
}

// connReader flushes pending output before a read of the socket that
// would block, so a client waiting for an answer is never left waiting on
// our buffer. When the client's next messages are already there (a
// pipelined Bind/Execute/Sync larger than the decoder's buffer), the read
// goes ahead without flushing: flushing there split one answer into
// several writes, and woke the client once for each of them.
type connReader struct{ c *conn }

func (r connReader) Read(p []byte) (int, error) {
	if r.c.bw.Buffered() > 0 {
		if n, ok := r.c.readNow(p); ok {
			return n, nil
		}
		if err := r.c.bw.Flush(); err != nil {
			r.c.readErr = err
			return 0, err
		}
	}
	n, err := r.c.nc.Read(p)
	if err != nil {
		r.c.readErr = err
	}
	return n, err
}

// readNow reads what the socket already holds without waiting; ok is false
// when nothing is there (or on any error: the caller's blocking read then
// reports it).
func (c *conn) readNow(p []byte) (n int, ok bool) {
	if c.raw == nil {
		return 0, false
	}
	var err error
	if rerr := c.raw.Read(func(fd uintptr) bool {
		n, err = syscall.Read(int(fd), p)
		return true // do not wait for readiness
	}); rerr != nil || err != nil || n <= 0 {
		return 0, false
	}
	return n, true
}

func (s *Server) serveConn(nc net.Conn) {
	c := &conn{s: s, nc: nc, stmts: map[string]*prepared{}, portals: map[string]*portal{}}
	c.bw = bufio.NewWriterSize(barrierWriter{c}, writeBufSize)
	c.out.c = c
	ctx, cancel := context.WithCancel(s.ctx)
	c.ctx = ctx
	defer cancel()
	defer func() {
		if r := recover(); r != nil {
			s.log.Error("wire: panic in connection", "remote", nc.RemoteAddr().String(), "panic", r, "stack", string(debug.Stack()))
		}
		c.closeAll()
		c.hang.close()
		if c.pid != 0 {
			s.unregister(c)
		}
		c.nc.Close()
	}()
	_ = nc.SetDeadline(time.Now().Add(authTimeout))
	if !c.startup() {
		_ = c.bw.Flush()
		return
	}
	_ = c.nc.SetDeadline(time.Time{})
	if sc, ok := c.nc.(syscall.Conn); ok { // not after a TLS upgrade
		c.raw, _ = sc.SyscallConn()
	}
	c.hup = hangupConn(c.nc)
	c.loop()
	_ = c.bw.Flush()
}

// closeAll closes portals and the session, recovering from panics in them.
func (c *conn) closeAll() {
	for name, p := range c.portals {
		c.closePortal(p)
		delete(c.portals, name)
	}
	if c.sess != nil {
		sess := c.sess
		c.sess = nil
		_ = c.call(func() error { sess.Close(); return nil })
	}
}

// loop reads and dispatches messages until Terminate, EOF or a fatal error.
func (c *conn) loop() {
	idler, _ := c.sess.(IdleTimeouter)
	for !c.fatal {
		idle := c.armIdle(idler)
		if c.s.draining.Load() || c.ending.Load() {
			// Shutdown or Terminate set the deadline before armIdle moved
			// it: cut again.
			_ = c.nc.SetReadDeadline(time.Now())
		}
		msg, err := c.be.Receive()
		if err != nil {
			if (c.s.draining.Load() || c.ending.Load()) && errors.Is(c.readErr, os.ErrDeadlineExceeded) {
				c.sendErrorSeverity("FATAL", newError("57P01", "terminating connection due to administrator command"))
				_ = c.nc.SetWriteDeadline(time.Now().Add(time.Second))
				_ = c.bw.Flush()
				return
			}
			if idle != 0 && errors.Is(c.readErr, os.ErrDeadlineExceeded) {
				c.idleTimeout(idle)
				return
			}
			if c.malformed(err) {
				continue
			}
			c.receiveError(err)
			return
		}
		if idle != 0 {
			_ = c.nc.SetReadDeadline(time.Time{})
		}
		if c.deferred && !c.resolveDeferred(msg) {
			return
		}
		if c.ignoreTillSync {
			switch msg.(type) {
			case *pgproto3.Sync:
				c.ignoreTillSync = false
				c.sync()
			case *pgproto3.Terminate:
				return
			}
			continue
		}
		switch m := msg.(type) {
		case *pgproto3.Query:
			c.simpleQuery(m.String)
		case *pgproto3.Parse:
			c.extended(c.parse(m))
		case *pgproto3.Bind:
			c.extended(c.bind(m))
		case *pgproto3.Describe:
			c.extended(c.describe(m))
		case *pgproto3.Execute:
			c.extended(c.execute(m))
		case *pgproto3.Close:
			c.extended(c.closeMsg(m))
		case *pgproto3.Sync:
			c.sync()
		case *pgproto3.Flush:
			if err := c.bw.Flush(); err != nil {
				return
			}
		case *pgproto3.Terminate:
			return
		case *pgproto3.CopyData, *pgproto3.CopyDone, *pgproto3.CopyFail:
			// Outside COPY these are ignored, as PostgreSQL does.
		case *pgproto3.FunctionCall:
			c.sendError(newError("0A000", "function call protocol is not supported"))
			c.readyForQuery()
		default:
			c.protocolViolation(fmt.Sprintf("unexpected message type %T", msg))
			return
		}
	}
}

// armIdle sets the read deadline of the session's idle timeout for its
// transaction status (idle_session_timeout, idle_in_transaction_session_
// timeout) and returns that status, or 0 when there is none.
func (c *conn) armIdle(idler IdleTimeouter) byte {
	if idler == nil {
		return 0
	}
	st := c.txStatus()
	var d time.Duration
	_ = c.call(func() error { d = idler.IdleTimeout(st); return nil })
	if d <= 0 {
		return 0
	}
	_ = c.nc.SetReadDeadline(time.Now().Add(d))
	return st
}

// idleTimeout ends a connection that stayed idle too long, with
// PostgreSQL's FATAL for its transaction status.
func (c *conn) idleTimeout(status byte) {
	if status == 'I' {
		c.sendErrorSeverity("FATAL", newError("57P05", "terminating connection due to idle-session timeout"))
	} else {
		c.sendErrorSeverity("FATAL", newError("25P03", "terminating connection due to idle-in-transaction timeout"))
	}
	_ = c.nc.SetWriteDeadline(time.Now().Add(time.Second))
	_ = c.bw.Flush()
}

// extended reports err of an extended-protocol message and starts
// discarding until Sync.
func (c *conn) extended(err error) {
	if err == nil {
		return
	}
	c.sendError(err)
	c.ignoreTillSync = true
}

// receiveError handles a failed Receive: I/O errors close quietly, protocol
// errors are reported first.
func (c *conn) receiveError(err error) {
	if c.readErr != nil {
		return
	}
	var tooBig *pgproto3.ExceededMaxBodyLenErr
	if errors.As(err, &tooBig) && tooBig.ActualBodyLen > pqLargeMessageLimit-4 {
		// A length no message may have (PostgreSQL's "invalid message
		// length", logged, not sent): the stream is out of step; close.
		c.s.log.Debug("wire: invalid message length", "remote", c.nc.RemoteAddr().String(), "length", tooBig.ActualBodyLen+4)
		c.fatal = true
		return
	}
	if errors.As(err, &tooBig) {
		c.sendErrorSeverity("FATAL", newError("54000", fmt.Sprintf("message of %d bytes exceeds the maximum message size of %d bytes", tooBig.ActualBodyLen, tooBig.MaxExpectedBodyLen)))
		c.fatal = true
		return
	}
	if frameError(c, err) {
		return
	}
	c.protocolViolation(err.Error())
}

// pqLargeMessageLimit is PostgreSQL's PQ_LARGE_MESSAGE_LIMIT: the
// longest message length (length word included) it reads at all.
const pqLargeMessageLimit = 0x3fffffff

func (c *conn) protocolViolation(msg string) {
	c.sendErrorSeverity("FATAL", newError("08P01", "protocol violation: "+msg))
	_ = c.bw.Flush()
	c.fatal = true
}

// sync ends an extended-protocol cycle: Session.Sync, then ReadyForQuery.
func (c *conn) sync() {
	if c.sess != nil {
		ctx, done := c.stmtCtx()
		c.out.reset(nil, nil)
		err := c.call(func() error { return c.sess.Sync(ctx, &c.out) })
		done()
		if err != nil {
			c.sendError(err)
		}
		if c.txStatus() == 'I' {
			// Portals do not outlive their (implicit) transaction.
			for name, p := range c.portals {
				c.closePortal(p)
				delete(c.portals, name)
			}
		}
	}
	c.readyForQuery()
}

func (c *conn) txStatus() byte {
	st := byte('I')
	_ = c.call(func() error { st = c.sess.TxStatus(); return nil })
	switch st {
	case 'I', 'T', 'E':
		return st
	}
	return 'I'
}

func (c *conn) readyForQuery() {
	if c.fatal {
		return
	}
	if cap(c.wbuf) > 1<<20 {
		c.wbuf = nil // do not keep a huge row's buffer around
	}
	if r, ok := c.sess.(ParameterReporter); ok {
		var changes []ParamStatus
		_ = c.call(func() error { changes = r.ParameterChanges(); return nil })
		for _, ps := range changes {
			c.send(&pgproto3.ParameterStatus{Name: ps.Name, Value: ps.Value})
		}
	}
	c.send(&pgproto3.ReadyForQuery{TxStatus: c.txStatus()})
	if err := c.bw.Flush(); err != nil {
		c.fatal = true
	}
}

// send encodes msg into the output buffer.
func (c *conn) send(msg pgproto3.BackendMessage) {
	buf, err := msg.Encode(c.wbuf[:0])
	if err != nil {
		c.s.log.Error("wire: encoding message", "type", fmt.Sprintf("%T", msg), "err", err)
		return
	}
	c.wbuf = buf
	_, _ = c.bw.Write(buf)
}

// sendComplete sends CommandComplete with tag, encoded in place: the
// message every statement ends with costs no allocation.
func (c *conn) sendComplete(tag string) {
	b := append(c.wbuf[:0], 'C', 0, 0, 0, 0)
	b = append(b, tag...)
	b = append(b, 0)
	binary.BigEndian.PutUint32(b[1:], uint32(len(b)-1))
	c.wbuf = b
	_, _ = c.bw.Write(b)
}

func (c *conn) sendError(err error) { c.sendErrorSeverity("ERROR", err) }

func (c *conn) sendErrorSeverity(sev string, err error) {
	if c.dead {
		return
	}
	if c.fatal {
		sev = "FATAL" // the connection closes after this error
	}
	if sev == "FATAL" {
		c.dead = true
	}
	if f, ok := c.sess.(TxFailer); ok && sev == "ERROR" {
		_ = c.call(func() error { f.FailTx(); return nil })
	}
	er := toErrorResponse(err)
	er.Severity, er.SeverityUnlocalized = sev, sev
	c.send(er)
}

// runCtx returns a context for one engine call that CancelRequest
// cancels, and the done to call when the call returns.
//
// Calls share one context until a call is canceled: a context is spent
// only by its cancellation, and one per call cost every statement two
// allocations of the context and its registration with the
// connection's. Nothing a call starts outlives it on the context (the
// engine's waits select on it while the call runs, and its timeouts
// are cancelled by their own defers), and a call's context is
// cancellable only while it runs (setCancel), so a late CancelRequest
// cancels nothing, as PostgreSQL's does when no query runs.
func (c *conn) runCtx() (context.Context, func()) {
	c.setCancel(c.callCancel())
	return c.cc.ctx, c.cc.endRun
}

// stmtCtx is runCtx for a call that runs a statement: the client's
// disconnect cancels it too (hangup.go). Its done stops the watch before
// the loop reads the socket again.
func (c *conn) stmtCtx() (context.Context, func()) {
	cancel := c.callCancel()
	c.setCancel(cancel)
	c.hang.begin(c, cancel)
	return c.cc.ctx, c.cc.endStmt
}

// callCtx is the context engine calls share (runCtx) and its cancel;
// endRun and endStmt are the dones runCtx and stmtCtx return, made once
// (callCancel) so that returning them allocates nothing.
type callCtx struct {
	ctx             context.Context
	cancel          context.CancelFunc
	endRun, endStmt func()
}

// callCancel makes the shared context anew if the last call's was
// cancelled, and returns its cancel.
func (c *conn) callCancel() context.CancelFunc {
	if c.cc.ctx == nil || c.cc.ctx.Err() != nil {
		c.cc.ctx, c.cc.cancel = context.WithCancel(c.ctx)
	}
	if c.cc.endRun == nil {
		c.cc.endRun = func() { c.setCancel(nil) }
		c.cc.endStmt = func() {
			c.hang.end(c)
			c.setCancel(nil)
		}
	}
	return c.cc.cancel
}

func (c *conn) setCancel(f context.CancelFunc) {
	c.cancelMu.Lock()
	c.cancelFn = f
	c.cancelMu.Unlock()
}

// rearmWatch watches the statement for a hangup again once a COPY FROM
// STDIN has read its last message: the rest of the statement (and of a
// multi-statement query) is watched as before.
func (c *conn) rearmWatch() { c.hang.resume(c) }

// pauseWatch stops the running statement's hangup watch, for a statement
// that reads the socket itself (COPY FROM STDIN).
func (c *conn) pauseWatch() { c.hang.pause(c) }

func (c *conn) cancelRunning() {
	c.cancelMu.Lock()
	if c.cancelFn != nil {
		c.cancelFn()
	}
	c.cancelMu.Unlock()
}

// call runs f, turning a panic into an internal error that closes the
// connection after it is reported.
func (c *conn) call(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			c.s.log.Error("wire: panic in handler", "pid", c.pid, "panic", r, "stack", string(debug.Stack()))
			err = newError("XX000", fmt.Sprintf("internal error: %v", r))
			c.fatal = true
		}
	}()
	return f()
}
