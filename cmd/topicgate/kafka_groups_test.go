package main

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// groupConsumer is a franz-go group consumer of group on topics that
// commits only when told (CommitUncommittedOffsets); assigned receives
// each assignment it is given, revoked each set it loses.
type groupConsumer struct {
	cl       *kgo.Client
	assigned chan map[string][]int32
	revoked  chan map[string][]int32
	// held is what the callbacks read so far say it holds of events.
	held map[int32]bool
}

func newGroupConsumer(t *testing.T, a *app, group string, topics ...string) *groupConsumer {
	t.Helper()
	return newGroupConsumerOpts(t, a, group, topics)
}

// newGroupConsumerOpts is newGroupConsumer with more client options.
func newGroupConsumerOpts(t *testing.T, a *app, group string, topics []string, opts ...kgo.Opt) *groupConsumer {
	t.Helper()
	gc := &groupConsumer{held: map[int32]bool{}, assigned: make(chan map[string][]int32, 16), revoked: make(chan map[string][]int32, 16)}
	opts = append(opts, kgo.ConsumerGroup(group), kgo.ConsumeTopics(topics...), kgo.DisableAutoCommit(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.HeartbeatInterval(100*time.Millisecond),
		kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, m map[string][]int32) { gc.assigned <- m }),
		kgo.OnPartitionsRevoked(func(_ context.Context, _ *kgo.Client, m map[string][]int32) { gc.revoked <- m }),
		kgo.OnPartitionsLost(func(_ context.Context, _ *kgo.Client, m map[string][]int32) { gc.revoked <- m }))
	gc.cl = kafkaClient(t, a, opts...)
	return gc
}

// poll reads n records (failing on a fetch error or more than n).
func (gc *groupConsumer) poll(t *testing.T, n int) []string {
	t.Helper()
	ctx := testCtx(t)
	var out []string
	for len(out) < n {
		fs := gc.cl.PollFetches(ctx)
		require.NoError(t, ctx.Err(), "waiting for %d records, have %d", n, len(out))
		for _, e := range fs.Errors() {
			t.Fatalf("fetch %s/%d: %v", e.Topic, e.Partition, e.Err)
		}
		fs.EachRecord(func(r *kgo.Record) { out = append(out, string(r.Value)) })
	}
	require.Len(t, out, n)
	sort.Strings(out)
	return out
}

// numbers are the decimal texts of from..to-1, sorted as strings.
func numbers(from, to int) []string {
	var out []string
	for i := from; i < to; i++ {
		out = append(out, fmt.Sprint(i))
	}
	sort.Strings(out)
	return out
}

// TestKafkaGroupConsume: a franz-go group consumer reads every message
// once (its fetches move no position) and commits; OffsetFetch (kadm) and sys.consumers show the
// committed positions; after a restart of the server a new consumer of
// the group reads only what came after them; a SQL read WITH (CONSUMER =
// group) continues where the group committed, and the group where SQL
// committed.
func TestKafkaGroupConsume(t *testing.T) {
	cfg := testConfig(t)
	cfg.KafkaListen = "127.0.0.1:0"
	a := startServer(t, cfg)
	c := connect(t, a)
	fillTopic(t, c, "orders", 3, 30)

	positions := "SELECT partition, committed_offset FROM sys.consumers WHERE topic = 'orders' AND consumer = 'billing' ORDER BY partition"
	gc := newGroupConsumer(t, a, "billing", "orders")
	require.Equal(t, numbers(0, 30), gc.poll(t, 30))
	// Fetching moved nothing: the consumer is made by the first commit.
	require.Empty(t, queryText(t, c, positions))
	require.NoError(t, gc.cl.CommitUncommittedOffsets(testCtx(t)))

	adm := kadm.NewClient(kafkaClient(t, a))
	offs, err := adm.FetchOffsets(testCtx(t), "billing")
	require.NoError(t, err)
	require.NoError(t, offs.Error())
	for p := int32(0); p < 3; p++ {
		o, ok := offs.Lookup("orders", p)
		require.True(t, ok, "partition %d", p)
		require.Equal(t, int64(10), o.At, "partition %d", p)
	}
	require.Equal(t, []string{"0 10", "1 10", "2 10"}, queryText(t, c, positions))
	// The consumer is not important: it holds no retention back.
	require.Equal(t, []string{"false"}, queryText(t, c, "SELECT important FROM sys.consumer_options WHERE topic = 'orders' AND consumer = 'billing'"))
	gc.cl.Close()

	// A restart: membership is gone, the offsets are not.
	require.NoError(t, a.Close())
	a = startServer(t, cfg)
	c = connect(t, a)
	for i := 30; i < 36; i++ {
		exec(t, c, "INSERT INTO orders (partition, data) VALUES ($1, $2)", int32(i%3), []byte(fmt.Sprint(i)))
	}
	gc = newGroupConsumer(t, a, "billing", "orders")
	require.Equal(t, numbers(30, 36), gc.poll(t, 6))
	require.Equal(t, []string{"0 10", "1 10", "2 10"}, queryText(t, c, positions), "a Kafka fetch moves no position")
	require.NoError(t, gc.cl.CommitUncommittedOffsets(testCtx(t)))
	gc.cl.Close()

	// SQL, as the same consumer, goes on from the group's offsets.
	for i := 36; i < 39; i++ {
		exec(t, c, "INSERT INTO orders (partition, data) VALUES ($1, $2)", int32(i%3), []byte(fmt.Sprint(i)))
	}
	got := queryText(t, c, "SELECT convert_from(data, 'UTF8') FROM orders WITH (CONSUMER = billing) LIMIT 100")
	sort.Strings(got)
	require.Equal(t, numbers(36, 39), got)
	// And the group from SQL's.
	exec(t, c, "INSERT INTO orders (partition, data) VALUES (0, '39')")
	gc = newGroupConsumer(t, a, "billing", "orders")
	require.Equal(t, []string{"39"}, gc.poll(t, 1))
}

// TestKafkaGroupRebalance: two members of one group share the
// partitions (each partition to one of them, balanced); when one leaves,
// the other takes them all; DescribeGroups and ListGroups (kadm) show
// the group and its members.
func TestKafkaGroupRebalance(t *testing.T) {
	a := startKafkaServer(t, nil)
	c := connect(t, a)
	fillTopic(t, c, "events", 4, 8)

	g1 := newGroupConsumer(t, a, "workers", "events")
	require.Len(t, waitAssigned(t, g1, 4), 4)

	g2 := newGroupConsumer(t, a, "workers", "events")
	a2 := waitAssigned(t, g2, 2)
	require.Len(t, a2, 2)

	adm := kadm.NewClient(kafkaClient(t, a))
	described, err := adm.DescribeGroups(testCtx(t), "workers")
	require.NoError(t, err)
	dg := described["workers"]
	require.NoError(t, dg.Err)
	require.Equal(t, "consumer", dg.ProtocolType)
	require.Len(t, dg.Members, 2)
	held := map[int32]int{}
	for _, m := range dg.Members {
		ca, ok := m.Assigned.AsConsumer()
		require.True(t, ok)
		for _, tp := range ca.Topics {
			for _, p := range tp.Partitions {
				held[p]++
			}
		}
	}
	require.Equal(t, map[int32]int{0: 1, 1: 1, 2: 1, 3: 1}, held, "each partition to one member")
	listed, err := adm.ListGroups(testCtx(t))
	require.NoError(t, err)
	require.Contains(t, listed.Groups(), "workers")

	// sys.kafka_groups shows the same members, their partitions as text,
	// to pg_monitor members and superusers only.
	rows, err := c.Query(context.Background(), `SELECT state, protocol_type, generation > 0, leader IN (SELECT member_id FROM sys.kafka_groups), client_id IS NOT NULL, assignment FROM sys.kafka_groups WHERE "group" = 'workers' ORDER BY member_id`)
	require.NoError(t, err)
	var assigned []string
	for rows.Next() {
		var state, ptype, assignment string
		var gen, leader, client bool
		require.NoError(t, rows.Scan(&state, &ptype, &gen, &leader, &client, &assignment))
		require.Equal(t, []any{"Stable", "consumer", true, true, true}, []any{state, ptype, gen, leader, client})
		assigned = append(assigned, assignment)
	}
	require.NoError(t, rows.Err())
	require.Len(t, assigned, 2)
	var parts []string
	for _, a := range assigned {
		inner, ok := strings.CutPrefix(a, "events[")
		require.True(t, ok, "assignment %q", a)
		parts = append(parts, strings.Split(strings.TrimSuffix(inner, "]"), ",")...)
	}
	require.ElementsMatch(t, []string{"0", "1", "2", "3"}, parts, "each partition once: %v", assigned)
	exec(t, c, "CREATE ROLE watcher LOGIN")
	w, err := pgx.Connect(context.Background(), fmt.Sprintf("postgres://watcher@%s/postgres?sslmode=disable", a.Addr()))
	require.NoError(t, err)
	defer w.Close(context.Background())
	var n int
	require.NoError(t, w.QueryRow(context.Background(), "SELECT count(*) FROM sys.kafka_groups").Scan(&n))
	require.Equal(t, 0, n, "sys.kafka_groups is for pg_monitor")
	exec(t, c, "GRANT pg_monitor TO watcher")
	require.NoError(t, w.QueryRow(context.Background(), "SELECT count(*) FROM sys.kafka_groups WHERE \"group\" = 'workers'").Scan(&n))
	require.Equal(t, 2, n)

	g2.cl.Close() // leaves the group
	require.Len(t, waitAssigned(t, g1, 4), 4)
}

// TestKafkaGroupSessionTimeout: a member that stops heartbeating without
// leaving (a static member closing, as a killed process) is removed when
// its session times out, and the other member takes all the partitions.
func TestKafkaGroupSessionTimeout(t *testing.T) {
	a := startKafkaServer(t, nil)
	fillTopic(t, connect(t, a), "events", 4, 8)
	g1 := newGroupConsumer(t, a, "workers", "events")
	require.Len(t, waitAssigned(t, g1, 4), 4)
	g2 := newGroupConsumerOpts(t, a, "workers", []string{"events"}, kgo.InstanceID("static-2"),
		kgo.SessionTimeout(500*time.Millisecond))
	require.Len(t, waitAssigned(t, g2, 2), 2)
	require.Len(t, waitAssigned(t, g1, 2), 2)
	g2.cl.Close() // a static member does not leave: its session times out
	require.Len(t, waitAssigned(t, g1, 4), 4)
}

// waitAssigned waits until gc holds n partitions of events, as its
// assigned and revoked callbacks report, and returns them (a copy).
func waitAssigned(t *testing.T, gc *groupConsumer, n int) map[int32]bool {
	t.Helper()
	ctx := testCtx(t)
	held := gc.held
	for len(held) != n {
		select {
		case m := <-gc.assigned:
			for _, p := range m["events"] {
				held[p] = true
			}
		case m := <-gc.revoked:
			for _, p := range m["events"] {
				delete(held, p)
			}
		case <-ctx.Done():
			t.Fatalf("waiting for %d partitions, holding %v", n, held)
		}
	}
	out := map[int32]bool{}
	for p := range held {
		out[p] = true
	}
	return out
}

// TestKafkaGroupBadInput: a JoinGroup whose protocol type differs from
// the group's is INCONSISTENT_GROUP_PROTOCOL; a Heartbeat of a stale
// generation is ILLEGAL_GENERATION, of an unknown member
// UNKNOWN_MEMBER_ID; a first JoinGroup (v4+) without a member id gets
// MEMBER_ID_REQUIRED and an id to join with.
func TestKafkaGroupBadInput(t *testing.T) {
	a := startKafkaServer(t, nil)
	cl := kafkaClient(t, a)
	ctx := testCtx(t)
	join := func(member, protocolType string) *kmsg.JoinGroupResponse {
		req := kmsg.NewPtrJoinGroupRequest()
		req.Group, req.MemberID, req.ProtocolType = "raw", member, protocolType
		req.SessionTimeoutMillis, req.RebalanceTimeoutMillis = 30000, 30000
		p := kmsg.NewJoinGroupRequestProtocol()
		p.Name, p.Metadata = "range", []byte{0}
		req.Protocols = []kmsg.JoinGroupRequestProtocol{p}
		resp, err := req.RequestWith(ctx, cl)
		require.NoError(t, err)
		return resp
	}
	first := join("", "consumer")
	require.Equal(t, kerr.MemberIDRequired.Code, first.ErrorCode)
	require.NotEmpty(t, first.MemberID)
	joined := join(first.MemberID, "consumer")
	require.Equal(t, int16(0), joined.ErrorCode)
	require.Equal(t, []any{int32(1), first.MemberID, "range"}, []any{joined.Generation, joined.LeaderID, *joined.Protocol})
	require.Len(t, joined.Members, 1)

	require.Equal(t, kerr.InconsistentGroupProtocol.Code, join("", "connect").ErrorCode)

	heartbeat := func(member string, gen int32) int16 {
		req := kmsg.NewPtrHeartbeatRequest()
		req.Group, req.MemberID, req.Generation = "raw", member, gen
		resp, err := req.RequestWith(ctx, cl)
		require.NoError(t, err)
		return resp.ErrorCode
	}
	require.Equal(t, int16(0), heartbeat(first.MemberID, 1))
	require.Equal(t, kerr.IllegalGeneration.Code, heartbeat(first.MemberID, 0))
	require.Equal(t, kerr.UnknownMemberID.Code, heartbeat("nobody", 1))

	// A commit of a stale generation is refused, as is one of an unknown
	// member; nothing is stored.
	exec(t, connect(t, a), "CREATE TOPIC raw_t")
	commit := kmsg.NewPtrOffsetCommitRequest()
	commit.Group, commit.MemberID, commit.Generation = "raw", first.MemberID, 0
	ct := kmsg.NewOffsetCommitRequestTopic()
	ct.Topic = "raw_t"
	cp := kmsg.NewOffsetCommitRequestTopicPartition()
	ct.Partitions = []kmsg.OffsetCommitRequestTopicPartition{cp}
	commit.Topics = []kmsg.OffsetCommitRequestTopic{ct}
	cresp, err := commit.RequestWith(ctx, cl)
	require.NoError(t, err)
	require.Equal(t, kerr.IllegalGeneration.Code, cresp.Topics[0].Partitions[0].ErrorCode)
	commit.MemberID = "nobody"
	cresp, err = commit.RequestWith(ctx, cl)
	require.NoError(t, err)
	require.Equal(t, kerr.UnknownMemberID.Code, cresp.Topics[0].Partitions[0].ErrorCode)
	require.Empty(t, queryText(t, connect(t, a), "SELECT consumer FROM sys.consumers WHERE topic = 'raw_t'"))

	leave := kmsg.NewPtrLeaveGroupRequest()
	leave.Group = "raw"
	lm := kmsg.NewLeaveGroupRequestMember()
	lm.MemberID = first.MemberID
	leave.Members = []kmsg.LeaveGroupRequestMember{lm}
	lresp, err := leave.RequestWith(ctx, cl)
	require.NoError(t, err)
	require.Equal(t, int16(0), lresp.Members[0].ErrorCode)
	require.Equal(t, kerr.UnknownMemberID.Code, heartbeat(first.MemberID, 1))
}

// TestKafkaGroupAuthz: the group APIs take SQL's privileges. A role
// with SELECT on a topic but not owning it cannot create the group's
// consumer (as ALTER TOPIC ... ADD CONSUMER) nor commit as an existing
// consumer without USAGE on it (GROUP_AUTHORIZATION_FAILED, nothing
// stored); with USAGE it commits and fetches the offsets.
func TestKafkaGroupAuthz(t *testing.T) {
	cfg := testConfig(t)
	cfg.KafkaListen, cfg.KafkaUser = "127.0.0.1:0", "reader"
	a := startServer(t, cfg)
	c := connect(t, a)
	fillTopic(t, c, "orders", 1, 3)
	exec(t, c, "CREATE ROLE reader LOGIN")
	exec(t, c, "GRANT SELECT ON TOPIC orders TO reader")
	cl := kafkaClient(t, a)
	ctx := testCtx(t)
	commit := func() int16 {
		req := kmsg.NewPtrOffsetCommitRequest()
		req.Group, req.Generation = "audit", -1
		rt := kmsg.NewOffsetCommitRequestTopic()
		rt.Topic = "orders"
		rp := kmsg.NewOffsetCommitRequestTopicPartition()
		rp.Offset = 2
		rt.Partitions = []kmsg.OffsetCommitRequestTopicPartition{rp}
		req.Topics = []kmsg.OffsetCommitRequestTopic{rt}
		resp, err := req.RequestWith(ctx, cl)
		require.NoError(t, err)
		return resp.Topics[0].Partitions[0].ErrorCode
	}
	positions := "SELECT committed_offset FROM sys.consumers WHERE topic = 'orders' AND consumer = 'audit'"
	require.Equal(t, kerr.GroupAuthorizationFailed.Code, commit())
	require.Empty(t, queryText(t, c, positions))

	exec(t, c, "ALTER TOPIC orders ADD CONSUMER audit")
	require.Equal(t, kerr.GroupAuthorizationFailed.Code, commit())
	require.Equal(t, []string{"0"}, queryText(t, c, positions))

	exec(t, c, "GRANT USAGE ON CONSUMER orders.audit TO reader")
	require.Equal(t, int16(0), commit())
	require.Equal(t, []string{"2"}, queryText(t, c, positions))
	offs, err := kadm.NewClient(cl).FetchOffsets(ctx, "audit")
	require.NoError(t, err)
	o, ok := offs.Lookup("orders", 0)
	require.True(t, ok)
	require.Equal(t, int64(2), o.At)
}

// listOffsetsRead is a kgo hook that tells, on done, that the client has
// read a ListOffsets answer: the offset it resets a partition to is then
// decided, and a record produced after it is read. It never blocks the
// client: done holds one signal, later ones are dropped.
type listOffsetsRead struct{ done chan struct{} }

func (h listOffsetsRead) OnBrokerRead(_ kgo.BrokerMetadata, key int16, _ int, _, _ time.Duration, err error) {
	if key == 2 && err == nil {
		select {
		case h.done <- struct{}{}:
		default:
		}
	}
}

// commitOffsets commits offsets of group (a simple commit, kadm's) and
// fails the test on any error.
func commitOffsets(t *testing.T, adm *kadm.Client, group string, os ...kadm.Offset) {
	t.Helper()
	var offs kadm.Offsets
	for _, o := range os {
		o.LeaderEpoch = -1
		offs.Add(o)
	}
	resp, err := adm.CommitOffsets(testCtx(t), group, offs)
	require.NoError(t, err)
	require.NoError(t, resp.Error())
}

// fetchedOffsets are group's committed offsets as OffsetFetch (kadm)
// answers them for every topic it is on: "topic/partition=offset".
func fetchedOffsets(t *testing.T, adm *kadm.Client, group string) []string {
	t.Helper()
	offs, err := adm.FetchOffsets(testCtx(t), group)
	require.NoError(t, err)
	require.NoError(t, offs.Error())
	var out []string
	offs.Each(func(o kadm.OffsetResponse) { out = append(out, fmt.Sprintf("%s/%d=%d", o.Topic, o.Partition, o.At)) })
	sort.Strings(out)
	return out
}

// TestKafkaGroupUncommittedAtEnd: OffsetFetch answers -1 for a partition
// the group never committed (a committed 0 is an offset), so a client
// with auto.offset.reset = latest starts that partition at its end while
// the committed one resumes where the group committed.
func TestKafkaGroupUncommittedAtEnd(t *testing.T) {
	a := startKafkaServer(t, nil)
	c := connect(t, a)
	fillTopic(t, c, "events", 3, 15) // partition p holds p, p+3, ...: 5 each
	adm := kadm.NewClient(kafkaClient(t, a))
	commitOffsets(t, adm, "tail", kadm.Offset{Topic: "events", Partition: 0, At: 3}, kadm.Offset{Topic: "events", Partition: 2, At: 0})
	require.Equal(t, []string{"events/0=3", "events/1=-1", "events/2=0"}, fetchedOffsets(t, adm, "tail"))
	// SQL still reads the uncommitted partition from its start.
	require.Equal(t, []string{"0 3", "1 0", "2 0"}, queryText(t, c,
		"SELECT partition, committed_offset FROM sys.consumers WHERE topic = 'events' AND consumer = 'tail' ORDER BY partition"))

	listed := listOffsetsRead{done: make(chan struct{}, 1)}
	gc := &groupConsumer{cl: kafkaClient(t, a, kgo.ConsumerGroup("tail"), kgo.ConsumeTopics("events"), kgo.DisableAutoCommit(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtEnd()), kgo.WithHooks(listed))}
	// Partitions 0 and 2 resume at their commits; 1 waits for its reset.
	require.Equal(t, []string{"11", "12", "14", "2", "5", "8", "9"}, gc.poll(t, 7))
	select {
	case <-listed.done:
	case <-testCtx(t).Done():
		t.Fatal("the client never listed partition 1's end")
	}
	exec(t, c, "INSERT INTO events (partition, data) VALUES (1, 'new1'), (0, 'new0')")
	require.Equal(t, []string{"new0", "new1"}, gc.poll(t, 2), "partition 1 from its end, not its start")
}

// TestKafkaGroupDeleteOffsets: OffsetDelete (kadm and sarama) forgets a
// group's committed offsets: OffsetFetch answers -1 for them again and
// SQL reads them from the start; the consumer stays. A topic members
// consume is GROUP_SUBSCRIBED_TO_TOPIC; an unknown partition or topic
// UNKNOWN_TOPIC_OR_PARTITION, a group on no topic GROUP_ID_NOT_FOUND.
func TestKafkaGroupDeleteOffsets(t *testing.T) {
	a := startKafkaServer(t, nil)
	c := connect(t, a)
	fillTopic(t, c, "events", 2, 4)
	fillTopic(t, c, "other", 2, 4)
	adm := kadm.NewClient(kafkaClient(t, a))
	commitOffsets(t, adm, "g", kadm.Offset{Topic: "events", Partition: 0, At: 1}, kadm.Offset{Topic: "events", Partition: 1, At: 2},
		kadm.Offset{Topic: "other", Partition: 0, At: 2}, kadm.Offset{Topic: "other", Partition: 1, At: 2})

	var del kadm.TopicsSet
	del.Add("events", 1, 7)
	del.Add("nope", 0)
	resp, err := adm.DeleteOffsets(testCtx(t), "g", del)
	require.NoError(t, err)
	require.NoError(t, resp["events"][1])
	require.ErrorIs(t, resp["events"][7], kerr.UnknownTopicOrPartition)
	require.ErrorIs(t, resp["nope"][0], kerr.UnknownTopicOrPartition)
	require.Equal(t, []string{"events/0=1", "events/1=-1", "other/0=2", "other/1=2"}, fetchedOffsets(t, adm, "g"))
	require.Equal(t, []string{"events 0 1", "events 1 0", "other 0 2", "other 1 2"}, queryText(t, c,
		"SELECT topic, partition, committed_offset FROM sys.consumers WHERE consumer = 'g' ORDER BY topic, partition"))

	_, err = adm.DeleteOffsets(testCtx(t), "nobody", del)
	require.ErrorIs(t, err, kerr.GroupIDNotFound)

	// A live member consuming events: its offsets stay, other's go.
	gc := newGroupConsumer(t, a, "g", "events")
	require.Len(t, waitAssigned(t, gc, 2), 2)
	del = nil
	del.Add("events", 0)
	del.Add("other", 0)
	resp, err = adm.DeleteOffsets(testCtx(t), "g", del)
	require.NoError(t, err)
	require.ErrorIs(t, resp["events"][0], kerr.GroupSubscribedToTopic)
	require.NoError(t, resp["other"][0])
	require.Equal(t, []string{"events/0=1", "events/1=-1", "other/0=-1", "other/1=2"}, fetchedOffsets(t, adm, "g"))

	// sarama's ClusterAdmin too.
	scfg := sarama.NewConfig()
	scfg.Version = sarama.V3_6_0_0
	sadm, err := sarama.NewClusterAdmin([]string{a.KafkaAddr()}, scfg)
	require.NoError(t, err)
	t.Cleanup(func() { sadm.Close() })
	require.NoError(t, sadm.DeleteConsumerGroupOffset("g", "other", 1))
	require.Equal(t, []string{"events/0=1", "events/1=-1", "other/0=-1", "other/1=-1"}, fetchedOffsets(t, adm, "g"))
}

// TestKafkaGroupDelete: DeleteGroups (kadm, sarama) refuses a group with
// a live member (NON_EMPTY_GROUP) and one on no topic
// (GROUP_ID_NOT_FOUND); an empty group loses its consumer on every
// topic, so it is gone from OffsetFetch, ListGroups and SQL, and commits
// again make it anew from nothing.
func TestKafkaGroupDelete(t *testing.T) {
	a := startKafkaServer(t, nil)
	c := connect(t, a)
	fillTopic(t, c, "events", 2, 4)
	fillTopic(t, c, "other", 1, 2)
	adm := kadm.NewClient(kafkaClient(t, a))
	commitOffsets(t, adm, "g", kadm.Offset{Topic: "events", Partition: 0, At: 2}, kadm.Offset{Topic: "other", Partition: 0, At: 1})
	exec(t, c, "ALTER TOPIC other ADD CONSUMER sqlonly")

	gc := newGroupConsumer(t, a, "g", "events")
	require.Len(t, waitAssigned(t, gc, 2), 2)
	_, err := adm.DeleteGroup(testCtx(t), "g")
	require.ErrorIs(t, err, kerr.NonEmptyGroup)
	require.Equal(t, []string{"events/0=2", "events/1=-1", "other/0=1"}, fetchedOffsets(t, adm, "g"))
	gc.cl.Close() // leaves the group

	deleted, err := adm.DeleteGroups(testCtx(t), "g", "nobody")
	require.NoError(t, err)
	require.NoError(t, deleted["g"].Err)
	require.ErrorIs(t, deleted["nobody"].Err, kerr.GroupIDNotFound)
	require.Contains(t, deleted["nobody"].ErrMessage, "nobody", "v3 says why")
	require.Empty(t, fetchedOffsets(t, adm, "g"))
	require.Equal(t, []string{"other sqlonly"}, queryText(t, c, "SELECT DISTINCT topic, consumer FROM sys.consumers ORDER BY 1, 2"))
	listed, err := adm.ListGroups(testCtx(t))
	require.NoError(t, err)
	require.NotContains(t, listed.Groups(), "g")

	// A new life of the group starts from nothing.
	commitOffsets(t, adm, "g", kadm.Offset{Topic: "events", Partition: 1, At: 1})
	require.Equal(t, []string{"events/0=-1", "events/1=1"}, fetchedOffsets(t, adm, "g"))

	scfg := sarama.NewConfig()
	scfg.Version = sarama.V3_6_0_0
	sadm, err := sarama.NewClusterAdmin([]string{a.KafkaAddr()}, scfg)
	require.NoError(t, err)
	t.Cleanup(func() { sadm.Close() })
	require.NoError(t, sadm.DeleteConsumerGroup("g"))
	require.Empty(t, fetchedOffsets(t, adm, "g"))
	require.ErrorIs(t, sadm.DeleteConsumerGroup("g"), sarama.ErrGroupIDNotFound)
}

// TestKafkaGroupDeleteAuthz: DeleteGroups takes what ALTER TOPIC ... DROP
// CONSUMER takes on each topic (owning it): a role owning one of the
// group's two topics gets GROUP_AUTHORIZATION_FAILED and nothing is
// dropped; owning both it deletes the group. OffsetDelete takes
// OffsetCommit's privileges (USAGE on the consumer).
func TestKafkaGroupDeleteAuthz(t *testing.T) {
	cfg := testConfig(t)
	cfg.KafkaListen, cfg.KafkaUser = "127.0.0.1:0", "keeper"
	a := startServer(t, cfg)
	c := connect(t, a)
	exec(t, c, "CREATE ROLE keeper LOGIN")
	fillTopic(t, c, "mine", 1, 2)
	fillTopic(t, c, "theirs", 1, 2)
	exec(t, c, "ALTER TOPIC mine OWNER TO keeper")
	exec(t, c, "ALTER TOPIC mine ADD CONSUMER g")
	exec(t, c, "ALTER TOPIC theirs ADD CONSUMER g")
	exec(t, c, "GRANT SELECT ON TOPIC theirs TO keeper")
	consumers := "SELECT DISTINCT topic FROM sys.consumers WHERE consumer = 'g' ORDER BY 1"
	adm := kadm.NewClient(kafkaClient(t, a))
	ctx := testCtx(t)

	_, err := adm.DeleteGroup(ctx, "g")
	require.ErrorIs(t, err, kerr.GroupAuthorizationFailed)
	require.Equal(t, []string{"mine", "theirs"}, queryText(t, c, consumers), "nothing dropped")

	var del kadm.TopicsSet
	del.Add("theirs", 0)
	resp, err := adm.DeleteOffsets(ctx, "g", del)
	require.NoError(t, err)
	require.ErrorIs(t, resp["theirs"][0], kerr.GroupAuthorizationFailed, "no USAGE on theirs.g")
	exec(t, c, "GRANT USAGE ON CONSUMER theirs.g TO keeper")
	resp, err = adm.DeleteOffsets(ctx, "g", del)
	require.NoError(t, err)
	require.NoError(t, resp["theirs"][0])

	exec(t, c, "ALTER TOPIC theirs OWNER TO keeper")
	_, err = adm.DeleteGroup(ctx, "g")
	require.NoError(t, err)
	require.Empty(t, queryText(t, c, consumers))
}
