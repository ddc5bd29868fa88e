package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
)

// TestKafkaGroupOffsetsRetention: the consumers the door created for a
// group are dropped once unused (no offset commit) for the offsets
// retention, unless the group has members; a consumer made in SQL is
// never dropped, whatever a Kafka group did with it.
func TestKafkaGroupOffsetsRetention(t *testing.T) {
	cfg := testConfig(t)
	cfg.KafkaListen = "127.0.0.1:0"
	cfg.KafkaOffsetsRetention = time.Hour
	a := startServer(t, cfg)
	c := connect(t, a)
	fillTopic(t, c, "events", 4, 8)
	exec(t, c, "ALTER TOPIC events ADD CONSUMER made_in_sql")
	ctx := testCtx(t)
	adm := kadm.NewClient(kafkaClient(t, a))
	commit := func(group string) {
		os := kadm.Offsets{}
		os.Add(kadm.Offset{Topic: "events", Partition: 0, At: 1, LeaderEpoch: -1})
		resp, err := adm.CommitOffsets(ctx, group, os)
		require.NoError(t, err)
		require.NoError(t, resp.Error())
	}
	commit("idle")
	commit("made_in_sql")
	live := newGroupConsumer(t, a, "live", "events")
	require.Len(t, waitAssigned(t, live, 4), 4)
	live.poll(t, 8)
	require.NoError(t, live.cl.CommitUncommittedOffsets(ctx))
	consumers := func() []string {
		return queryText(t, c, "SELECT DISTINCT consumer FROM sys.consumers WHERE topic = 'events' ORDER BY consumer")
	}
	require.Equal(t, []string{"idle", "live", "made_in_sql"}, consumers())

	n, err := a.kafka.ExpireGroups(ctx, time.Now().Add(30*time.Minute))
	require.NoError(t, err)
	require.Zero(t, n, "not unused long enough")
	n, err = a.kafka.ExpireGroups(ctx, time.Now().Add(2*time.Hour))
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Equal(t, []string{"live", "made_in_sql"}, consumers(), "a group with members and a SQL consumer stay")
	fs, err := adm.FetchOffsets(ctx, "idle")
	require.NoError(t, err)
	require.Zero(t, fs.Offsets().Sorted(), "the dropped group has no offsets")
}
