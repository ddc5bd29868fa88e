package consume

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestHandoffHoldBack drives a read group with an injected clock: a
// partition read by A's open transaction stays with A when B joins, moves
// when the transaction ends, and moves anyway once the grace has passed
// (the pin is void then); partitions that are not held move at once.
func TestHandoffHoldBack(t *testing.T) {
	now := time.Unix(1000, 0)
	clock := func() time.Time { return now }
	newGroup := func() *Group {
		var r Groups
		r.clock, r.grace = clock, 10*time.Second
		return r.Get("t", "c")
	}
	parts := []int32{0, 1, 2, 3}
	join := func(g *Group, pid uint32, txID uint64) []int32 {
		held, _ := g.join(joinReq{pid: pid, partitions: parts, now: now, idle: time.Hour, txID: txID})
		return held
	}

	// Ends with the transaction.
	g := newGroup()
	require.Equal(t, parts, join(g, 1, 7))
	g.mu.Lock()
	delete(g.txHeld, 0) // the transaction read only 1, 2 and 3
	g.mu.Unlock()
	require.Equal(t, []int32{0}, join(g, 2, 0), "B gets the unheld partition at once")
	now = now.Add(time.Second)
	require.Equal(t, []int32{0}, join(g, 2, 0), "and the held one of its share not yet")
	g.releaseTx(1, 7)
	require.Equal(t, []int32{0, 3}, join(g, 2, 0), "the move happens when the transaction ends")
	require.True(t, g.holds(1, 1) && g.holds(1, 2))

	// Ends with the grace.
	g = newGroup()
	require.Equal(t, parts, join(g, 1, 8))
	require.Empty(t, join(g, 2, 0), "every partition of A is held by its transaction")
	now = now.Add(9 * time.Second)
	require.Empty(t, join(g, 2, 0))
	now = now.Add(time.Second)
	require.Equal(t, []int32{2, 3}, join(g, 2, 0), "at the grace B gets its share")
	require.False(t, g.holds(1, 2), "A's COMMIT will fail: it no longer holds 2")
	g.releaseTx(1, 8) // the late end of the transaction changes nothing
	require.Equal(t, []int32{2, 3}, join(g, 2, 0))
}

// TestHandoffAwaitsRead: a move held back by another session's autocommit
// read in flight (a pin) is one the new owner waits for (awaitsRead),
// until the read ends; one held back by an open transaction is not.
func TestHandoffAwaitsRead(t *testing.T) {
	now := time.Unix(1000, 0)
	var r Groups
	r.clock, r.grace = func() time.Time { return now }, 10*time.Second
	parts := []int32{0, 1, 2, 3}

	g := r.Get("t", "pinned")
	held, _ := g.join(joinReq{pid: 1, partitions: parts, now: now, idle: time.Hour, pin: true})
	require.Equal(t, parts, held, "A's read pins every partition")
	held, _ = g.join(joinReq{pid: 2, partitions: parts, now: now, idle: time.Hour})
	require.Empty(t, held)
	require.True(t, g.awaitsRead(2), "B's share waits only for A's read")
	require.False(t, g.awaitsRead(1))
	g.unpin(1, parts)
	require.False(t, g.awaitsRead(2))
	held, _ = g.join(joinReq{pid: 2, partitions: parts, now: now, idle: time.Hour})
	require.Equal(t, []int32{2, 3}, held, "the move happened when A's read ended")

	g = r.Get("t", "tx")
	g.join(joinReq{pid: 1, partitions: parts, now: now, idle: time.Hour, txID: 9})
	held, _ = g.join(joinReq{pid: 2, partitions: parts, now: now, idle: time.Hour})
	require.Empty(t, held)
	require.False(t, g.awaitsRead(2), "an open transaction is not waited for")
}
