package wire

import (
	"context"
	"errors"
	"net"
	"sync"
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
// hangupArmDelay, and arming costs a short statement almost nothing: a
// connection has one timer, set when a statement starts and none is
// pending, which at most every hangupArmDelay looks whether a statement
// has been running that long and then starts its watch. A timer per
// statement (time.AfterFunc, then Stop) cost a single-row INSERT more
// than its own planning: adding a timer to an idle process wakes a
// thread to take the runtime's timers (wakeNetPoller, wakep), 5.6% of
// the server's CPU for a lone client's INSERTs. The watch holds the
// socket's read lock while it waits: before anything else reads the
// socket during the statement (COPY FROM STDIN), the statement pauses
// it, and when the statement ends the loop stops it (a read deadline in
// the past wakes it) before it reads again.

// hangupArmDelay is how long an engine call runs before its hangup watch
// starts; a disconnect is noticed at most about this long after the
// statement started, at once after that.
const hangupArmDelay = 20 * time.Millisecond

// errClientGone is the cancellation cause of a statement whose client
// disconnected.
var errClientGone = errors.New("client disconnected")

// hangup is a connection's hangup watching: which statement runs, since
// when, and its watch once one started. The loop's goroutine calls
// begin, end, pause and resume; the timer's goroutine calls fire.
type hangup struct {
	mu      sync.Mutex
	timer   *time.Timer // made at the first statement; pending while armed
	armed   bool
	running bool // an engine call runs (begin .. end)
	paused  bool // it reads the socket itself (COPY FROM STDIN)
	since   time.Time
	cancel  context.CancelFunc // the running call's
	active  *hangupWatch       // its watch, once started
}

// hangupWatch watches one engine call's connection.
type hangupWatch struct {
	c      *conn
	cancel context.CancelFunc
	done   chan struct{} // closed when run returns
}

// begin notes that an engine call (cancel cancels it) starts now, and
// makes sure the timer will look at it. Nothing happens where the socket
// cannot be watched.
func (h *hangup) begin(c *conn, cancel context.CancelFunc) {
	if c.hup == nil {
		return
	}
	h.mu.Lock()
	h.running, h.paused, h.cancel, h.since = true, false, cancel, time.Now()
	h.arm(c, hangupArmDelay)
	h.mu.Unlock()
}

// arm sets the timer unless it is pending. Called with h.mu held.
func (h *hangup) arm(c *conn, d time.Duration) {
	if h.armed {
		return
	}
	h.armed = true
	if h.timer == nil {
		h.timer = time.AfterFunc(d, func() { h.fire(c) })
		return
	}
	h.timer.Reset(d)
}

// fire runs on the timer's goroutine: it starts the running call's watch
// once the call has run hangupArmDelay, looks again later if it has run
// less, and lets the timer rest when no call runs (the next begin sets
// it).
func (h *hangup) fire(c *conn) {
	h.mu.Lock()
	h.armed = false
	if !h.running || h.paused || h.active != nil {
		h.mu.Unlock()
		return
	}
	if wait := hangupArmDelay - time.Since(h.since); wait > 0 {
		h.arm(c, wait)
		h.mu.Unlock()
		return
	}
	w := &hangupWatch{c: c, cancel: h.cancel, done: make(chan struct{})}
	h.active = w
	h.mu.Unlock()
	w.run()
}

// end notes that the engine call ended; when it returns, no watch
// touches the socket any more.
func (h *hangup) end(c *conn) { h.stopWatch(c, true) }

// pause stops the running call's watch and starts none until resume,
// for a call that reads the socket itself.
func (h *hangup) pause(c *conn) { h.stopWatch(c, false) }

// stopWatch notes the call's end (ended) or pause, takes its started
// watch, if any, and stops it.
func (h *hangup) stopWatch(c *conn, ended bool) {
	if c.hup == nil {
		return
	}
	h.mu.Lock()
	if ended {
		h.running, h.cancel = false, nil
	} else {
		h.paused = true
	}
	w := h.active
	h.active = nil
	h.mu.Unlock()
	w.stop()
}

// resume watches the running call again, hangupArmDelay from now.
func (h *hangup) resume(c *conn) {
	if c.hup == nil {
		return
	}
	h.mu.Lock()
	if h.running && h.paused {
		h.paused = false
		h.arm(c, hangupArmDelay)
	}
	h.mu.Unlock()
}

// close stops the timer when the connection ends.
func (h *hangup) close() {
	h.mu.Lock()
	if h.timer != nil {
		h.timer.Stop()
	}
	h.mu.Unlock()
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

// stop ends a started watch (nil: none started); when it returns, the
// watch no longer touches the socket. A watch is stopped once, by whoever
// took it out of hangup.active.
func (w *hangupWatch) stop() {
	if w == nil {
		return
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
