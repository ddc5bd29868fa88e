package jetstream

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"topicgate/topicstore"
	"topicgate/topicstore/jetstream/catalog"
	"topicgate/topicstore/jetstream/jstest"
)

// TestRolesAcrossGateways: a role catalog changed through gateway A is
// what gateway B reads once its Barrier returned, a document of several
// messages too; and of two changes through A and B based on the same
// version, exactly one is stored and the other refused with
// ErrRolesConflict, after which both gateways read the winner's.
func TestRolesAcrossGateways(t *testing.T) {
	c := jstest.Start(t, 3)
	ctx := context.Background()
	stores := openStores(t, c, Options{Stream: "TGROLES"}, 2)
	a, b := stores[0], stores[1]

	v1, err := a.SetRoles(ctx, 0, []byte("from a"))
	require.NoError(t, err)
	require.NoError(t, b.Barrier(ctx))
	doc, v := b.Roles()
	require.Equal(t, "from a", string(doc))
	require.Equal(t, v1, v)

	big := bytes.Repeat([]byte("role\x00member\n"), 3*catalog.RolesPartBytes/12+5) // four messages
	v2, err := b.SetRoles(ctx, v1, big)
	require.NoError(t, err)
	require.Greater(t, v2, v1)
	require.NoError(t, a.Barrier(ctx))
	doc, v = a.Roles()
	require.Equal(t, v2, v)
	require.True(t, bytes.Equal(big, doc), "the document of several messages, whole")

	for round := range 12 {
		_, base := a.Roles()
		type result struct {
			who string
			v   uint64
			err error
		}
		start := make(chan struct{})
		results := make(chan result, 2)
		for who, s := range map[string]*Store{"a": a, "b": b} {
			go func() {
				<-start
				v, err := s.SetRoles(ctx, base, []byte(fmt.Sprintf("%s %d", who, round)))
				results <- result{who, v, err}
			}()
		}
		close(start)
		r1, r2 := <-results, <-results
		if r1.err != nil {
			r1, r2 = r2, r1
		}
		require.NoError(t, r1.err, "round %d: one change is stored", round)
		require.ErrorIs(t, r2.err, topicstore.ErrRolesConflict, "round %d: the other is refused", round)
		require.Greater(t, r1.v, base)
		for _, s := range stores {
			require.NoError(t, s.Barrier(ctx))
			doc, v := s.Roles()
			require.Equal(t, fmt.Sprintf("%s %d", r1.who, round), string(doc), "round %d", round)
			require.Equal(t, r1.v, v)
		}
	}
}

// TestRolesFromSnapshot: a gateway that starts from a snapshot of the
// fold taken after the role catalog's last change (its messages before
// the snapshot's point, none after) reads the document.
func TestRolesFromSnapshot(t *testing.T) {
	c := jstest.Start(t, 1)
	ctx := context.Background()
	o := Options{Replicas: 1, Stream: "TGSNAPROLES", Timeout: 2 * time.Second, RetentionInterval: -1, SnapshotEvery: 1}
	a := openStores(t, c, o, 1)[0]
	require.NoError(t, a.CreateTopic(ctx, topicstore.TopicConfig{Name: "t", Owner: "o"}))
	v1, err := a.SetRoles(ctx, 0, []byte("old"))
	require.NoError(t, err)
	big := bytes.Repeat([]byte{0, 1, 2, 0xff}, catalog.RolesPartBytes/2) // two messages
	v2, err := a.SetRoles(ctx, v1, big)
	require.NoError(t, err)
	require.NoError(t, a.snap.Write(ctx))

	b := openStores(t, c, o, 1)[0]
	b.mu.Lock()
	from := b.fold.Snap.From
	b.mu.Unlock()
	require.NotZero(t, from, "b started from the snapshot")
	doc, v := b.Roles()
	require.Equal(t, v2, v)
	require.True(t, bytes.Equal(big, doc))
	_, err = b.SetRoles(ctx, v1, []byte("stale"))
	require.True(t, errors.Is(err, topicstore.ErrRolesConflict), "%v", err)
}
