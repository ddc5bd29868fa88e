package main

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"
)

// groupMembers is what sys.kafka_groups of a says of group: its
// generation and member ids, one line each.
func groupMembers(t *testing.T, a *app, group string) []string {
	t.Helper()
	return queryText(t, connect(t, a), `SELECT generation::text || ' ' || member_id FROM sys.kafka_groups
		WHERE "group" = $1 AND member_id IS NOT NULL ORDER BY member_id`, group)
}

// TestKafkaGroupSurvivesRestart: a group's membership is in the store, so
// when the server restarts (the same data directory, or a new gateway on
// the same stream) two franz-go members go on as they were: the same
// member ids and generation, no rebalance (neither is told it lost or
// gained a partition), and each reads on from its own fetch positions
// (nothing was committed before: a rebalance would have sent them back
// to the start); their commits after the restart are taken.
func TestKafkaGroupSurvivesRestart(t *testing.T) {
	cfg := testConfig(t)
	cfg.KafkaListen = "127.0.0.1:0"
	a, err := start(cfg)
	require.NoError(t, err)
	fillTopic(t, connect(t, a), "events", 4, 8)
	opts := []kgo.Opt{kgo.SessionTimeout(10 * time.Second)}
	g1 := newGroupConsumerOpts(t, a, "workers", []string{"events"}, opts...)
	require.Len(t, waitAssigned(t, g1, 4), 4)
	g2 := newGroupConsumerOpts(t, a, "workers", []string{"events"}, opts...)
	require.Len(t, waitAssigned(t, g2, 2), 2)
	require.Len(t, waitAssigned(t, g1, 2), 2)
	require.Len(t, append(g1.poll(t, 4), g2.poll(t, 4)...), 8)
	for _, gc := range []*groupConsumer{g1, g2} { // what the joins left (kgo revokes nothing at a session's end)
		for len(gc.assigned)+len(gc.revoked) > 0 {
			select {
			case <-gc.assigned:
			case <-gc.revoked:
			}
		}
	}
	before := groupMembers(t, a, "workers")
	require.Len(t, before, 2)

	cfg.KafkaListen = a.KafkaAddr() // the clients' broker address
	require.NoError(t, a.Close())
	a, err = start(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { a.Close() })

	c := connect(t, a)
	for i := 8; i < 16; i++ {
		exec(t, c, "INSERT INTO events (partition, data) VALUES ($1, $2)", int32(i%4), []byte(fmt.Sprint(i)))
	}
	got := append(g1.poll(t, 4), g2.poll(t, 4)...)
	require.ElementsMatch(t, numbers(8, 16), got, "each member reads on from where it was")
	// Each member commits as the member of the generation it joined (an
	// unknown member or generation would fail the commit), which loads
	// the group if no heartbeat did yet.
	for _, gc := range []*groupConsumer{g1, g2} {
		require.NoError(t, gc.cl.CommitUncommittedOffsets(testCtx(t)))
	}
	require.Equal(t, before, groupMembers(t, a, "workers"), "the same members at the same generation")
	for _, gc := range []*groupConsumer{g1, g2} {
		select {
		case m := <-gc.assigned:
			t.Fatalf("a member was assigned %v again: the group rebalanced", m)
		case m := <-gc.revoked:
			t.Fatalf("a member's session ended (revoked %v): the group rebalanced", m)
		default:
		}
	}
}
