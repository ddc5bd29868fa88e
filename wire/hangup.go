package wire

import (
	"context"
	"errors"
	"net"
	"syscall"
	"time"
)

// A client that goes away while one of its statements runs must not leave
// that statement running: a consumer read waiting for messages would keep
// the consumer's partitions and, once a message arrived, read and commit it
// for a client that is gone. Between messages the loop's blocking read sees
// the end of the connection at once; during a statement nobody reads the
// socket, so the connection arms a hangup watch.
//
// The watch does not read: pipelined messages the client already sent stay
// in the socket for the loop. It waits for the socket's next readiness
// event through the runtime's poller (RawConn.Read with a callback that
// asks to wait again) and, at each event, asks the kernel whether the peer
// has closed or reset the connection (poll with POLLRDHUP, which reports a
// FIN even when unread data precedes it). So a watch costs nothing while
// the client is quiet, and wakes only when bytes or a hangup arrive.
//
// The watch is armed only for statements that run longer than
// hangupArmDelay, so the common short statement pays for one timer. The
// watch holds the socket's read lock while it waits: before anything else
// reads the socket during the statement (COPY FROM STDIN), the statement
// pauses it, and when the statement ends the loop stops it (a read
// deadline in the past wakes it) before it reads again.

// hangupArmDelay is how long an engine call runs before its hangup watch
// starts; a disconnect is noticed at most this long after the statement
// started, at once after that.
const hangupArmDelay = 20 * time.Millisecond

// errClientGone is the cancellation cause of a statement whose client
// disconnected.
var errClientGone = errors.New("client disconnected")

// hangupWatch watches one engine call's connection.
type hangupWatch struct {
	c       *conn
	cancel  context.CancelFunc
	timer   *time.Timer
	done    chan struct{} // closed when run returns
	stopped bool
}

// armHangup starts a watch that cancels the call (cancel) if the client
// disconnects; nil where the socket cannot be watched.
func (c *conn) armHangup(cancel context.CancelFunc) *hangupWatch {
	if c.hup == nil {
		return nil
	}
	w := &hangupWatch{c: c, cancel: cancel, done: make(chan struct{})}
	w.timer = time.AfterFunc(hangupArmDelay, w.run)
	return w
}

func (w *hangupWatch) run() {
	defer close(w.done)
	gone := false
	_ = w.c.hup.Read(func(fd uintptr) bool {
		gone = peerClosed(fd)
		return gone // false: wait for the next readiness event
	})
	if gone {
		w.c.gone.Store(true)
		w.cancel()
	}
}

// stop disarms the watch; when it returns, the watch no longer touches the
// socket. It may be called more than once.
func (w *hangupWatch) stop() {
	if w == nil || w.stopped {
		return
	}
	w.stopped = true
	if w.timer.Stop() {
		return // it never started
	}
	_ = w.c.nc.SetReadDeadline(time.Unix(1, 0))
	<-w.done
	_ = w.c.nc.SetReadDeadline(time.Time{})
}

// peerGone reports whether the client has closed or reset the connection,
// as a watch saw or as the socket says now.
func (c *conn) peerGone() bool {
	if c.gone.Load() {
		return true
	}
	if c.hup == nil {
		return false
	}
	gone := false
	_ = c.hup.Control(func(fd uintptr) { gone = peerClosed(fd) })
	return gone
}

// hangupConn returns the raw TCP socket under nc (also under TLS), or nil.
func hangupConn(nc net.Conn) syscall.RawConn {
	if u, ok := nc.(interface{ NetConn() net.Conn }); ok { // *tls.Conn
		nc = u.NetConn()
	}
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return nil
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	return raw
}
