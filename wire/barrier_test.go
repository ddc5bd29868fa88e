package wire

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// barrierHandler's sessions implement DurabilityBarrier: once the test
// arms it, the next WaitDurable reports that it was entered and blocks
// until the test releases it; every other call passes at once.
type barrierHandler struct {
	fakeHandler
	armed   atomic.Bool
	entered chan struct{}
	release chan struct{}
}

type barrierSession struct {
	*fakeSession
	h *barrierHandler
}

func (h *barrierHandler) NewSession(ctx context.Context, info SessionInfo) (Session, error) {
	s, err := h.fakeHandler.NewSession(ctx, info)
	if err != nil {
		return nil, err
	}
	return &barrierSession{fakeSession: s.(*fakeSession), h: h}, nil
}

func (s *barrierSession) WaitDurable() error {
	// Not armed: startup output, or output after the released one. (A
	// non-blocking send here instead let the statement's output through
	// whenever the server flushed before the test goroutine reached its
	// receive, and the test then waited forever; -race made that common.)
	if s.h.armed.CompareAndSwap(true, false) {
		s.h.entered <- struct{}{}
		<-s.h.release
	}
	return nil
}

// TestDurabilityBarrier: no result reaches the client before the session's
// WaitDurable returned.
func TestDurabilityBarrier(t *testing.T) {
	h := &barrierHandler{entered: make(chan struct{}), release: make(chan struct{})}
	_, addr := startServer(t, Config{}, h)
	ctx := context.Background()
	c, err := pgconn.Connect(ctx, "postgres://u@"+addr+"/db?sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	h.armed.Store(true)
	done := make(chan error, 1)
	go func() {
		_, err := c.Exec(ctx, "SELECT 1").ReadAll()
		done <- err
	}()
	<-h.entered // the server's output is waiting behind the barrier
	select {
	case err := <-done:
		t.Fatalf("the client got its result (err %v) before the barrier was released", err)
	default:
	}
	close(h.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
