package jstest_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"

	"topicgate/topicstore/jetstream/jsext"
	"topicgate/topicstore/jetstream/jstest"
)

// TestBatchCASUnderLeaderFaults: the compare-and-set the store's shared
// consumers, producers and positions rest on, under the faults the
// cluster tests make. Writers on every node race atomic batches whose
// first message expects the last sequence of one subject (as a
// shared-consumer state does) while the stream's leader is stopped
// (SIGSTOP) and killed (SIGKILL) in turns. Nothing rolls the subject up,
// so afterwards every message stored on it must expect the one stored
// before it: two stored over the same predecessor would let two gateways
// each believe its change of a consumer's state is the one that stands.
func TestBatchCASUnderLeaderFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for RAFT elections (~25s)")
	}
	c := jstest.Start(t, 3)
	nc := c.Connect()
	atomicStream(t, jstest.JetStream(t, nc), "CAS", "cas.>")
	servedEverywhere(t, c, "cas.s")

	var stop atomic.Bool
	var stored, refused, unknown atomic.Int64
	var wg sync.WaitGroup
	for w := range 4 {
		wc := c.Connect(nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
		wg.Add(1)
		go func() {
			defer wg.Done()
			var expect uint64
			for n := 0; !stop.Load(); n++ {
				state := expectSubjSeq(&nats.Msg{Subject: "cas.s", Data: fmt.Appendf(nil, "w%d-%d", w, n)}, expect)
				state.Header.Set("Tg-Writer", strconv.Itoa(w))
				other := &nats.Msg{Subject: fmt.Sprintf("cas.w.%d", w), Data: []byte("x")}
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				ack, err := jsext.PublishAtomic(ctx, wc, []*nats.Msg{state, other})
				cancel()
				var apiErr *natsjs.APIError
				switch {
				case err == nil:
					stored.Add(1)
					expect = ack.First()
				case errors.As(err, &apiErr) && apiErr.ErrorCode == jsext.ErrCodeWrongLastSequence:
					refused.Add(1)
					i := strings.LastIndex(apiErr.Description, ": ")
					if v, perr := strconv.ParseUint(apiErr.Description[i+2:], 10, 64); i >= 0 && perr == nil {
						expect = v
					}
				case jsext.ErrorCode(err) != 0:
					refused.Add(1)
				default:
					unknown.Add(1)
					time.Sleep(20 * time.Millisecond)
				}
			}
		}()
	}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	for round := range 4 {
		time.Sleep(time.Second)
		leader := c.StreamLeader("CAS")
		if round%2 == 0 {
			c.Pause(leader)
			time.Sleep(time.Duration(5000+rng.IntN(3000)) * time.Millisecond) // past an election
			c.Resume(leader)
			t.Logf("round %d: leader node %d stopped and resumed", round, leader)
		} else {
			c.Kill(leader)
			time.Sleep(time.Duration(1000+rng.IntN(3000)) * time.Millisecond)
			c.Restart(leader)
			t.Logf("round %d: leader node %d killed and restarted", round, leader)
		}
	}
	time.Sleep(time.Second)
	stop.Store(true)
	wg.Wait()
	t.Logf("%d batches stored, %d refused, %d without an answer", stored.Load(), refused.Load(), unknown.Load())
	if stored.Load() == 0 {
		t.Fatal("no batch was stored: the test proved nothing")
	}

	c.StreamLeader("CAS")
	js := jstest.JetStream(t, c.Connect(nats.MaxReconnects(-1)))
	var s natsjs.Stream
	jstest.Eventually(t, 30*time.Second, func() (err error) {
		s, err = js.Stream(ctxFor(t, 2*time.Second), "CAS")
		return err
	})
	prev, n := uint64(0), 0
	for _, m := range readAll(t, s) {
		if m.Subject() != "cas.s" {
			continue
		}
		seq := seqOf(t, m)
		exp, _ := strconv.ParseUint(m.Headers().Get(natsjs.ExpectedLastSubjSeqHeader), 10, 64)
		if exp != prev {
			t.Errorf("cas.s message %d (writer %s, %q) expected %d, but %d was stored before it", seq, m.Headers().Get("Tg-Writer"), m.Data(), exp, prev)
		}
		prev = seq
		n++
	}
	t.Logf("%d states on cas.s, each over the one it expected", n)
}
