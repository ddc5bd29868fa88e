package jstest_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"

	"topicgate/topicstore/jetstream/jstest"
)

// TestPublishWithNodesDown measures what a client sees of an R3 stream on
// three nodes as nodes die (SIGKILL) and return:
//   - the stream leader killed: publishes time out (no error from the
//     server, just no answer) until the two survivors elect a leader,
//     5.0-7.8s over 6 runs; a killed follower costs nothing;
//   - a second node killed: every publish waits for the caller's whole
//     timeout and fails with context.DeadlineExceeded (measured with
//     nats.go's default 5s: 5.00s, three times in a row); the server never
//     answers, so the gateway must bound its publishes and turn the timeout
//     into "cluster unavailable";
//   - the node restarted: it is healthy 0.1-6.3s later, and publishes work
//     within 0.25s of that.
//
// It takes ~15s: election timeouts, not the test, set the pace.
func TestPublishWithNodesDown(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for RAFT elections (~15s)")
	}
	c := jstest.Start(t, 3)
	nc := c.Connect(nats.MaxReconnects(-1))
	js := jstest.JetStream(t, nc)
	atomicStream(t, js, "F", "f.>")
	publish := func(timeout time.Duration) (time.Duration, error) {
		ctx := ctxFor(t, timeout)
		t0 := time.Now()
		_, err := js.Publish(ctx, "f.x", []byte("x"))
		return time.Since(t0), err
	}
	// untilPublishes retries short publishes and returns how long it took;
	// every failure on the way must be a timeout.
	untilPublishes := func() (time.Duration, int) {
		t.Helper()
		t0 := time.Now()
		for attempts := 1; ; attempts++ {
			_, err := publish(250 * time.Millisecond)
			if err == nil {
				return time.Since(t0), attempts
			}
			if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, natsjs.ErrNoStreamResponse) {
				t.Fatalf("attempt %d: %v", attempts, err)
			}
			if time.Since(t0) > jstest.WaitTimeout {
				t.Fatalf("no publish for %v: %v", jstest.WaitTimeout, err)
			}
		}
	}
	if _, err := publish(5 * time.Second); err != nil {
		t.Fatal(err)
	}

	leader := c.StreamLeader("F")
	c.Kill(leader)
	d, n := untilPublishes()
	t.Logf("stream leader (node %d) killed: publishes work again after %v (%d attempts)", leader, d, n)

	leader2 := c.StreamLeader("F")
	follower := 3 - leader - leader2
	c.Kill(follower)
	d, err := publish(2 * time.Second)
	if !errors.Is(err, context.DeadlineExceeded) || d < 2*time.Second {
		t.Fatalf("one node of three left: publish returned %v after %v, want a timeout after 2s", err, d)
	}
	t.Logf("one node of three left: publish fails with %q after its whole timeout (%v)", err, d)

	t0 := time.Now()
	c.Restart(follower)
	restarted := time.Since(t0)
	d, n = untilPublishes()
	t.Logf("node %d restarted: healthy after %v, then publishes work after %v (%d attempts)", follower, restarted, d, n)
}

// TestMetaLeaderDown: with the JetStream meta leader killed, a stream whose
// leader lives keeps taking publishes at once; only the API that goes
// through the meta group (stream create) waits for the new meta leader.
func TestMetaLeaderDown(t *testing.T) {
	c := jstest.Start(t, 3)
	nc := c.Connect(nats.MaxReconnects(-1))
	js := jstest.JetStream(t, nc)
	meta := c.MetaLeader()
	stream := ""
	for i := range 6 { // find a stream led by another node than the meta leader
		name := fmt.Sprintf("S%d", i)
		atomicStream(t, js, name, "s"+fmt.Sprint(i)+".>")
		if c.StreamLeader(name) != meta {
			stream = name
			break
		}
	}
	if stream == "" {
		t.Skip("every stream landed on the meta leader")
	}
	subj := "s" + strings.TrimPrefix(stream, "S") + ".x"
	// Publish through the stream leader's node, so that the kill does not
	// also cost the client its connection (a reconnect is not what this
	// measures).
	js = jstest.JetStream(t, c.ConnectTo(c.StreamLeader(stream), nats.MaxReconnects(-1)))
	// One publish first, so that the new stream's group has formed and its
	// replicas are current before a node dies (on a busy machine the first
	// one after a creation can take a while). The one after the kill may
	// take up to 5 s; no election is needed for it (its leader lives).
	if _, err := js.Publish(ctxFor(t, 5*time.Second), subj, []byte("warm")); err != nil {
		t.Fatalf("publish before the kill: %v", err)
	}
	c.Kill(meta)
	t0 := time.Now()
	if _, err := js.Publish(ctxFor(t, 5*time.Second), subj, []byte("x")); err != nil {
		t.Fatalf("publish with the meta leader down: %v", err)
	}
	t.Logf("meta leader (node %d) killed: a publish to %s took %v", meta, stream, time.Since(t0))
	t0 = time.Now()
	_, err := js.CreateStream(ctxFor(t, time.Second), natsjs.StreamConfig{Name: "NEW", Subjects: []string{"new.>"}, Replicas: 3})
	if err == nil {
		t.Fatalf("stream create succeeded %v after the meta leader died", time.Since(t0))
	}
	t.Logf("stream create meanwhile: %v after %v", err, time.Since(t0))
}
