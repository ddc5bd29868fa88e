package jetstream

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"topicgate/topicstore"
	"topicgate/topicstore/jetstream/jstest"
)

// TestGather: a Gather collects one answer from every live gateway, its
// own first, without waiting for a gateway that stopped gracefully (its
// farewell heartbeat has expired already); a gateway that stops answering
// without leaving (as if killed) is named missing, and is not waited for
// again until it renews its heartbeat.
func TestGather(t *testing.T) {
	c := jstest.Start(t, 1)
	ctx := context.Background()
	o := Options{Replicas: 1, Stream: "TGGATHER", Timeout: 2 * time.Second}
	stores := openStores(t, c, o, 3)
	for i, s := range stores {
		name := []byte{'a' + byte(i)}
		require.NoError(t, s.Serve("who", func() []byte { return name }))
	}
	require.Error(t, stores[0].Serve("who", func() []byte { return nil }), "one answer per kind")
	for _, s := range stores {
		require.NoError(t, s.sync(ctx)) // every heartbeat folded everywhere
	}
	answers := func(g topicstore.Gathered) map[string]string {
		m := map[string]string{}
		for _, a := range g.Answers {
			m[a.Gateway] = string(a.Data)
		}
		return m
	}
	a, b, d := stores[0], stores[1], stores[2]
	g, err := a.Gather(ctx, "who")
	require.NoError(t, err)
	require.Equal(t, a.GatewayID(), g.Answers[0].Gateway, "its own answer first")
	require.Equal(t, map[string]string{a.GatewayID(): "a", b.GatewayID(): "b", d.GatewayID(): "c"}, answers(g))
	require.Empty(t, g.Missing)

	// d stops gracefully: nobody waits for it.
	require.NoError(t, d.Close())
	require.NoError(t, a.sync(ctx))
	wait, silent := a.liveGateways()
	require.Equal(t, map[string]bool{b.GatewayID(): true}, wait)
	require.Empty(t, silent)

	// b stops answering but its heartbeat lives on.
	for _, sub := range b.answer.subs {
		require.NoError(t, sub.Unsubscribe())
	}
	g, err = a.Gather(ctx, "who")
	require.NoError(t, err)
	require.Equal(t, map[string]string{a.GatewayID(): "a"}, answers(g))
	require.Equal(t, []string{b.GatewayID()}, g.Missing)
	wait, silent = a.liveGateways()
	require.Empty(t, wait, "b is not waited for again")
	require.Equal(t, []string{b.GatewayID()}, silent)
	g, err = a.Gather(ctx, "who")
	require.NoError(t, err)
	require.Equal(t, []string{b.GatewayID()}, g.Missing)

	// Once b renews its heartbeat it is waited for again.
	require.True(t, b.groups.Renew())
	require.NoError(t, a.sync(ctx))
	wait, _ = a.liveGateways()
	require.Equal(t, map[string]bool{b.GatewayID(): true}, wait)
}

// twoGateways opens two stores on a one-node cluster, sharing stream.
func twoGateways(t *testing.T, stream string) (a, b *Store) {
	t.Helper()
	stores := openStores(t, jstest.Start(t, 1), Options{Replicas: 1, Stream: stream, Timeout: 2 * time.Second}, 2)
	return stores[0], stores[1]
}

// TestAsk: an Ask reaches the one gateway it names, which answers it on
// a goroutine of its own with the asker's deadline; a gateway that
// answers no such kind, or is gone, is ErrUnavailable.
func TestAsk(t *testing.T) {
	ctx := context.Background()
	a, b := twoGateways(t, "TGASK")
	require.NoError(t, b.Answer("echo", func(ctx context.Context, data []byte) []byte {
		_, ok := ctx.Deadline()
		return append([]byte(fmt.Sprintf("%s deadline=%v: ", b.GatewayID(), ok)), data...)
	}))
	actx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	got, err := a.Ask(actx, b.GatewayID(), "echo", []byte("hi"))
	require.NoError(t, err)
	require.Equal(t, b.GatewayID()+" deadline=true: hi", string(got))
	_, err = a.Ask(actx, a.GatewayID(), "echo", nil)
	require.ErrorIs(t, err, topicstore.ErrUnavailable, "a has no answer of that kind")
	require.NoError(t, b.Close())
	_, err = a.Ask(actx, b.GatewayID(), "echo", nil)
	require.ErrorIs(t, err, topicstore.ErrUnavailable, "b is gone")
}

// TestGatherAsksAgain: a gateway whose answers subscribe only after the
// first question went out (it published its heartbeat first, as every
// gateway does when it starts) is heard through the question asked again,
// and is not taken for silent.
func TestGatherAsksAgain(t *testing.T) {
	ctx := context.Background()
	a, b := twoGateways(t, "TGREASK")
	require.NoError(t, a.Serve("who", func() []byte { return []byte("a") }))
	require.NoError(t, a.sync(ctx))
	wait, _ := a.liveGateways()
	require.Equal(t, map[string]bool{b.GatewayID(): true}, wait, "a knows b before b answers anything")
	var asks []int
	a.answer.onAsk = func(n int) {
		asks = append(asks, n)
		if n == 1 { // b starts answering just after the first question
			require.NoError(t, a.nc.Flush()) // the question has reached the node, and no one
			require.NoError(t, b.Serve("who", func() []byte { return []byte("b") }))
			require.NoError(t, b.nc.Flush())
		}
	}
	g, err := a.Gather(ctx, "who")
	require.NoError(t, err)
	require.Len(t, g.Answers, 2)
	require.Equal(t, b.GatewayID(), g.Answers[1].Gateway)
	require.Equal(t, "b", string(g.Answers[1].Data))
	require.Empty(t, g.Missing)
	require.Equal(t, []int{1, 2}, asks, "asked twice")
	_, silent := a.liveGateways()
	require.Empty(t, silent)
}

// TestGatherKnowsWhoStarted: a gateway whose Open has returned is waited
// for by a Gather through another gateway, even while that one's fold has
// not yet applied its first heartbeat (the read barrier fills it in).
func TestGatherKnowsWhoStarted(t *testing.T) {
	ctx := context.Background()
	c := jstest.Start(t, 1)
	o := Options{Replicas: 1, Stream: "TGSTARTED", Timeout: 2 * time.Second}
	a := openStores(t, c, o, 1)[0]
	require.NoError(t, a.Serve("who", func() []byte { return []byte("a") }))
	a.cons.Stop() // a's fold learns nothing more unless asked to catch up
	b := openStores(t, c, o, 1)[0]
	require.NoError(t, b.Serve("who", func() []byte { return []byte("b") }))
	require.NoError(t, b.nc.Flush())
	wait, _ := a.liveGateways()
	require.Empty(t, wait, "a's fold has not seen b's heartbeat")
	g, err := a.Gather(ctx, "who")
	require.NoError(t, err)
	require.Len(t, g.Answers, 2)
	require.Equal(t, b.GatewayID(), g.Answers[1].Gateway)
	require.Empty(t, g.Missing)
}
