package wire

import (
	"context"
	"net"
	"testing"
	"time"
)

// tcpPair returns the two ends of a loopback TCP connection.
func tcpPair(t *testing.T) (server, client net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server, err = ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { server.Close(); client.Close() })
	return server, client
}

// TestHangupWatchAfterShortStatements drives a connection's hangup
// watching directly: many short statements start and end while the
// connection's one timer is pending (none of them is cancelled); then a
// long statement runs, the client goes away, and the statement is
// cancelled and the connection marked gone. A paused statement (one that
// reads the socket itself) is not watched until it resumes.
func TestHangupWatchAfterShortStatements(t *testing.T) {
	nc, client := tcpPair(t)
	c := &conn{nc: nc}
	c.hup = hangupConn(nc)
	if c.hup == nil {
		t.Fatal("a TCP connection has a raw socket to watch")
	}
	defer c.hang.close()
	for range 200 {
		ctx, cancel := context.WithCancel(context.Background())
		c.hang.begin(c, cancel)
		c.hang.end(c)
		if ctx.Err() != nil {
			t.Fatal("a short statement was cancelled")
		}
		cancel()
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c.hang.begin(c, cancel)
	c.hang.pause(c)
	_ = client.Close()
	c.hang.mu.Lock()
	c.hang.since = time.Now().Add(-time.Hour) // it has run long enough
	c.hang.mu.Unlock()
	c.hang.fire(c) // what the timer does: nothing while paused
	c.hang.mu.Lock()
	watching := c.hang.active != nil
	c.hang.mu.Unlock()
	if watching || ctx.Err() != nil {
		t.Fatal("a paused statement is watched")
	}
	c.hang.resume(c)
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the client went away and the statement ran on")
	}
	c.hang.end(c)
	if !c.gone.Load() {
		t.Fatal("the connection is not marked gone")
	}
	// The socket is the loop's again: no read deadline is left behind.
	if _, err := nc.Read(make([]byte, 1)); err == nil || isTimeout(err) {
		t.Fatalf("read after the watch: %v, want the peer's EOF", err)
	}
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}
