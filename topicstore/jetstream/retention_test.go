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

// TestRetentionYieldsToARewind: retention decides a partition's new start
// from the important consumers' positions its gateway folded, and moves it
// only if none of them moved since (its start record carries a check on
// each position's subject). Gateway A's fold is stopped, so it still sees
// the important consumer at 8 after B rewound it to 2; A's retention,
// which would cut at 8, is refused, and B still reads from 2. Once A has
// folded the rewind, retention cuts at 2.
func TestRetentionYieldsToARewind(t *testing.T) {
	c := jstest.Start(t, 1)
	ctx := context.Background()
	stores := openStores(t, c, Options{Replicas: 1, Stream: "TGRET", Timeout: 2 * time.Second, RetentionInterval: -1}, 2)
	a, b := stores[0], stores[1]
	require.NoError(t, a.CreateTopic(ctx, topicstore.TopicConfig{Name: "t", MinActivePartitions: 1, RetentionPeriod: time.Minute,
		Consumers: []topicstore.ConsumerConfig{{Name: "imp", Important: true}}}))
	for i := range 10 {
		_, err := a.Commit(ctx, &topicstore.CommitRequest{Writes: []topicstore.TopicWrite{{Topic: "t",
			Messages: []topicstore.Message{{Partition: 0, Body: []byte(fmt.Sprint(i))}}}}})
		require.NoError(t, err)
	}
	require.NoError(t, a.SetPosition(ctx, "t", "imp", 0, 8))
	require.NoError(t, b.sync(ctx))
	a.cons.Stop() // from now on A folds nothing another gateway writes
	require.NoError(t, b.SetPosition(ctx, "t", "imp", 0, 2))

	later := time.Now().Add(time.Hour) // every message has expired
	deleted, err := a.RunRetention(ctx, later)
	require.NoError(t, err)
	require.Zero(t, deleted, "a cut decided before the rewind is refused")
	require.NoError(t, b.sync(ctx))
	var got []string
	require.NoError(t, b.Scan(ctx, "t", topicstore.ScanRange{Partition: 0, Start: 2, End: -1}, func(m *topicstore.Message) bool {
		got = append(got, string(m.Body))
		return true
	}))
	require.Equal(t, []string{"2", "3", "4", "5", "6", "7", "8", "9"}, got)

	require.NoError(t, a.sync(ctx)) // fills A's fold from the stream
	deleted, err = a.RunRetention(ctx, later)
	require.NoError(t, err)
	require.Equal(t, int64(2), deleted, "retention cuts at the rewound position")
}
