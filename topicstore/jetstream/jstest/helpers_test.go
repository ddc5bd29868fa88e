package jstest_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"

	"topicgate/topicstore/jetstream/jsext"
	"topicgate/topicstore/jetstream/jstest"
)

func ctxFor(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// atomicStream creates an R3 file stream that takes atomic batches.
func atomicStream(t testing.TB, js natsjs.JetStream, name string, subjects ...string) natsjs.Stream {
	t.Helper()
	// The cluster's meta group may still be electing right after the
	// nodes start: on a loaded CI machine one creation outlived 10s. The
	// creation is idempotent (the same config returns the stream), so it
	// is tried again within a larger budget.
	var s natsjs.Stream
	jstest.Eventually(t, time.Minute, func() error {
		var err error
		s, err = js.CreateStream(ctxFor(t, 10*time.Second), natsjs.StreamConfig{
			Name:               name,
			Subjects:           subjects,
			Replicas:           3,
			Storage:            natsjs.FileStorage,
			AllowAtomicPublish: true,
		})
		return err
	})
	// A new stream's group elects its leader a moment after the creation
	// returns; until then a publish finds no responders (seen on a busy
	// machine). The tests here are about what a stream with a leader does.
	jstest.Eventually(t, 10*time.Second, func() error {
		info, err := s.Info(ctxFor(t, time.Second))
		if err != nil {
			return err
		}
		if info.Cluster == nil || info.Cluster.Leader == "" {
			return fmt.Errorf("stream %s has no leader yet", name)
		}
		return nil
	})
	return s
}

// servedEverywhere waits until a publish to subject through each of c's
// nodes reaches the stream's leader. The leader subscribes to the stream's
// subjects when it is elected and the other nodes learn of that interest
// through their routes a moment later; until then a publish through them
// finds no responders (seen on a busy machine). The probe expects a last
// sequence the stream cannot have, so it is refused and stores nothing.
func servedEverywhere(t testing.TB, c *jstest.Cluster, subject string) {
	t.Helper()
	for i := range c.Nodes().N() {
		nc := c.ConnectTo(i)
		jstest.Eventually(t, 10*time.Second, func() error {
			m := nats.NewMsg(subject)
			m.Header.Set(natsjs.ExpectedLastSeqHeader, strconv.FormatUint(1<<62, 10))
			resp, err := nc.RequestMsg(m, time.Second)
			if err != nil {
				return fmt.Errorf("through node %d: %w", i, err)
			}
			if !strings.Contains(string(resp.Data), `"error"`) {
				t.Fatalf("the probe through node %d was stored: %s", i, resp.Data)
			}
			return nil
		})
	}
}

// batch makes n messages on subject with payloads "<tag>-<i>".
func batch(subject, tag string, n int) []*nats.Msg {
	msgs := make([]*nats.Msg, n)
	for i := range msgs {
		msgs[i] = &nats.Msg{Subject: subject, Data: fmt.Appendf(nil, "%s-%d", tag, i)}
	}
	return msgs
}

func expectSubjSeq(m *nats.Msg, seq uint64) *nats.Msg {
	if m.Header == nil {
		m.Header = nats.Header{}
	}
	m.Header.Set(natsjs.ExpectedLastSubjSeqHeader, strconv.FormatUint(seq, 10))
	return m
}

func expectLastSeq(m *nats.Msg, seq uint64) *nats.Msg {
	if m.Header == nil {
		m.Header = nats.Header{}
	}
	m.Header.Set(natsjs.ExpectedLastSeqHeader, strconv.FormatUint(seq, 10))
	return m
}

// A batch that finds no responders is published again for up to 10 s:
// nothing of it was stored, and right after a stream's creation its
// leader's interest in the subjects may not have reached the node the
// client is connected to yet (as nats.go's own Publish retries).
func publishAtomic(t testing.TB, nc *nats.Conn, msgs []*nats.Msg) (*jsext.BatchAck, error) {
	ctx := ctxFor(t, 10*time.Second)
	for {
		ack, err := jsext.PublishAtomic(ctx, nc, msgs)
		if !errors.Is(err, nats.ErrNoResponders) || ctx.Err() != nil {
			return ack, err
		}
		select {
		case <-ctx.Done():
			return ack, err
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// lastSeq is the stream's last sequence and message count.
func lastSeq(t testing.TB, s natsjs.Stream) (last, msgs uint64) {
	t.Helper()
	info, err := s.Info(ctxFor(t, 5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	return info.State.LastSeq, info.State.Msgs
}

// readAll returns every message of the stream in sequence order.
func readAll(t testing.TB, s natsjs.Stream) []natsjs.Msg {
	t.Helper()
	_, n := lastSeq(t, s)
	if n == 0 {
		return nil
	}
	// A consumer's creation right after the stream's may find no
	// responders for a moment (see publishAtomic): read again then.
	var out []natsjs.Msg
	jstest.Eventually(t, 20*time.Second, func() error {
		out = nil
		ctx := ctxFor(t, 10*time.Second)
		cons, err := s.OrderedConsumer(ctx, natsjs.OrderedConsumerConfig{})
		if err != nil {
			return err
		}
		for uint64(len(out)) < n {
			b, err := cons.Fetch(int(n)-len(out), natsjs.FetchMaxWait(5*time.Second))
			if err != nil {
				return err
			}
			for m := range b.Messages() {
				out = append(out, m)
			}
			if err := b.Error(); err != nil {
				return err
			}
		}
		return nil
	})
	return out
}

func seqOf(t testing.TB, m natsjs.Msg) uint64 {
	t.Helper()
	md, err := m.Metadata()
	if err != nil {
		t.Fatal(err)
	}
	return md.Sequence.Stream
}

func wantCode(t testing.TB, err error, code natsjs.ErrorCode) {
	t.Helper()
	if got := jsext.ErrorCode(err); got != code {
		t.Fatalf("err = %v (err_code %d), want err_code %d", err, got, code)
	}
}
