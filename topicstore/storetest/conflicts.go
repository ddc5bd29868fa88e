package storetest

import (
	"fmt"
	"sync"
	"time"

	"github.com/stretchr/testify/require"

	"topicgate/topicstore"
)

var conflictTests = []subtest{
	{"PositionExactlyOneWins", testConflictPositions},
	{"ProducerExactlyOnce", testConflictProducer},
	{"SharedNoDoubleDelivery", needs(Shared, testConflictShared)},
	{"AckRacesExpiry", needs(Shared, testConflictAckExpiry)},
}

// testConflictPositions: concurrent commits expecting the same committed
// offset: exactly one wins, and only its writes are written.
func testConflictPositions(e *env) {
	t := e.t
	e.create("in", 1, topicstore.ConsumerConfig{Name: "c"})
	e.create("out", 1)
	e.commit("in", body("a"), body("b"), body("c"))
	const n = 16
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			_, errs[i] = e.s.Commit(ctx, &topicstore.CommitRequest{
				Writes:    []topicstore.TopicWrite{{Topic: "out", Messages: []topicstore.Message{body(fmt.Sprint(i))}}},
				Positions: []topicstore.PositionUpdate{{Topic: "in", Consumer: "c", Offset: int64(1 + i%3), Expect: 0}},
			})
		})
	}
	wg.Wait()
	winner := -1
	for i, err := range errs {
		if err == nil {
			require.Equal(t, -1, winner, "two commits won")
			winner = i
		} else {
			require.ErrorIs(t, err, topicstore.ErrPositionConflict)
		}
	}
	require.GreaterOrEqual(t, winner, 0, "one commit wins")
	require.Equal(t, []string{fmt.Sprintf("0:%d", winner)}, e.scan("out", part(0)))
	require.Equal(t, map[int32]int64{0: int64(1 + winner%3)}, e.positions("in", "c"))
}

// testConflictProducer: two writers sending the same producer's seqnos
// concurrently: each seqno is written exactly once, in order.
func testConflictProducer(e *env) {
	t := e.t
	e.create("t", 2)
	const n = 50
	var mu sync.Mutex
	var written, dups int
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			for i := int64(1); i <= n; i++ {
				res, err := e.s.Commit(ctx, &topicstore.CommitRequest{Writes: []topicstore.TopicWrite{{Topic: "t", Messages: []topicstore.Message{pmsg("p", i, fmt.Sprint(i))}}}})
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				written += res.Writes[0].Written
				dups += res.Writes[0].Duplicates
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	require.Equal(t, [2]int{n, n}, [2]int{written, dups})
	p, ok := e.s.Producer("t", "p")
	require.True(t, ok)
	msgs := e.scanMsgs("t", part(p.Partition))
	require.Len(t, msgs, n)
	for i, m := range msgs {
		require.Equal(t, int64(i+1), m.SeqNo)
		require.Equal(t, fmt.Sprint(i+1), string(m.Body))
	}
}

// testConflictShared: concurrent sessions never hold the same message,
// and every message is delivered once when all are acknowledged.
func testConflictShared(e *env) {
	t := e.t
	e.create("q", 2, sharedCfg("w", nil))
	const per = 40
	for p := int32(0); p < 2; p++ {
		var msgs []topicstore.Message
		for i := 0; i < per; i++ {
			msgs = append(msgs, body(fmt.Sprintf("%d-%d", p, i)))
		}
		e.commit("q", at(p, msgs...)...)
	}
	var mu sync.Mutex
	seen := map[topicstore.MsgRef]uint32{}
	var wg sync.WaitGroup
	for session := uint32(1); session <= 4; session++ {
		wg.Go(func() {
			for {
				as, err := e.s.Acquire(ctx, topicstore.AcquireRequest{Topic: "q", Consumer: "w", Session: session, Max: 3})
				if err != nil {
					t.Error(err)
					return
				}
				if len(as) == 0 {
					return
				}
				var refs []topicstore.MsgRef
				mu.Lock()
				for _, a := range as {
					r := topicstore.MsgRef{Partition: a.Message.Partition, Offset: a.Message.Offset}
					if s, dup := seen[r]; dup {
						t.Errorf("%v delivered to sessions %d and %d", r, s, session)
					}
					seen[r] = session
					refs = append(refs, r)
				}
				mu.Unlock()
				out, err := e.s.SharedAction(ctx, topicstore.SharedActionRequest{Topic: "q", Consumer: "w", Session: session, Action: topicstore.ActionAck, Refs: refs})
				if err != nil {
					t.Error(err)
					return
				}
				for _, o := range out {
					if o != topicstore.OutcomeDone {
						t.Errorf("ack outcome %v", o)
					}
				}
			}
		})
	}
	wg.Wait()
	require.Len(t, seen, 2*per)
	st, err := e.s.SharedStats("q", "w")
	require.NoError(t, err)
	require.Equal(t, []int64{per, per}, []int64{st[0].StartOffset, st[1].StartOffset})
}

// testConflictAckExpiry: once a lock expired, the old holder's commit
// that acknowledges it fails, and the new holder's succeeds.
func testConflictAckExpiry(e *env) {
	t := e.t
	e.create("q", 1, sharedCfg("w", nil))
	e.commit("q", body("a"))
	e.acquire("q", "w", 1, 1)
	e.clk.Advance(11 * time.Second)
	require.Equal(t, []string{"0:0:a:2"}, e.acq("q", "w", 2, 1), "the expired lock went back to the queue")
	ack := func(session uint32) error {
		_, err := e.s.Commit(ctx, &topicstore.CommitRequest{Acks: []topicstore.SharedAck{{Topic: "q", Consumer: "w", Session: session, Refs: []topicstore.MsgRef{r0(0)}}}})
		return err
	}
	require.ErrorIs(t, ack(1), topicstore.ErrLockExpired)
	require.NoError(t, ack(2))
	require.Equal(t, outcomes(topicstore.OutcomeFinished), e.act("q", "w", 1, topicstore.ActionAck, r0(0)))
	require.Equal(t, int64(1), e.stats0("q", "w").StartOffset)
}
