package main

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/IBM/sarama"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// showCreate is SHOW CREATE TOPIC name's statement.
func showCreate(t *testing.T, a *app, name string) string {
	t.Helper()
	rows := queryText(t, connect(t, a), "SHOW CREATE TOPIC "+name)
	require.Len(t, rows, 1)
	return rows[0]
}

// TestKafkaCreateTopics: kadm's CreateTopics makes a topic SQL sees with
// the partition count and retention asked for (min and max active
// partitions), its configs in the answer; ValidateOnly creates nothing;
// a second create is TOPIC_ALREADY_EXISTS; configs the store cannot
// honour, a replication factor past the one broker and a bad partition
// count are refused, creating nothing; kcat -L lists the new topic.
func TestKafkaCreateTopics(t *testing.T) {
	a := startKafkaServer(t, nil)
	adm := kadm.NewClient(kafkaClient(t, a))
	ctx := testCtx(t)

	resp, err := adm.CreateTopic(ctx, 3, -1, map[string]*string{"retention.ms": kmsg.StringPtr("7200000")}, "orders")
	require.NoError(t, err)
	require.NoError(t, resp.Err)
	require.Equal(t, []any{int32(3), int16(1)}, []any{resp.NumPartitions, resp.ReplicationFactor})
	require.Equal(t, "7200000", *resp.Configs["retention.ms"].Value)
	ddl := showCreate(t, a, "orders")
	require.Contains(t, ddl, "min_active_partitions = 3")
	require.Contains(t, ddl, "max_active_partitions = 3")
	require.Contains(t, ddl, "retention_period = Interval('PT2H')")
	c := connect(t, a)
	require.Equal(t, []string{"0", "1", "2"}, queryText(t, c, "SELECT partition FROM sys.partitions WHERE topic = 'orders' ORDER BY partition"))

	_, err = adm.CreateTopic(ctx, 1, 1, nil, "orders")
	require.ErrorIs(t, err, kerr.TopicAlreadyExists)

	vresps, err := adm.ValidateCreateTopics(ctx, 2, -1, nil, "dry")
	require.NoError(t, err)
	require.NoError(t, vresps["dry"].Err)
	require.Equal(t, int32(2), vresps["dry"].NumPartitions)
	require.Empty(t, queryText(t, c, "SELECT topic FROM sys.topics WHERE topic = 'dry'"), "ValidateOnly creates nothing")

	bad := map[string]struct {
		parts   int32
		rf      int16
		configs map[string]*string
		want    *kerr.Error
	}{
		"compact":  {1, -1, map[string]*string{"cleanup.policy": kmsg.StringPtr("compact")}, kerr.InvalidConfig},
		"unknown":  {1, -1, map[string]*string{"segment.bytes": kmsg.StringPtr("1024")}, kerr.InvalidConfig},
		"forever":  {1, -1, map[string]*string{"retention.ms": kmsg.StringPtr("-1")}, kerr.InvalidConfig},
		"huge":     {1, -1, map[string]*string{"max.message.bytes": kmsg.StringPtr("20000000")}, kerr.InvalidConfig},
		"oddbytes": {1, -1, map[string]*string{"retention.bytes": kmsg.StringPtr("1000")}, kerr.InvalidConfig},
		"rf3":      {1, 3, nil, kerr.InvalidReplicationFactor},
		"zero":     {0, -1, nil, kerr.InvalidPartitions},
	}
	for name, b := range bad {
		resps, err := adm.CreateTopics(ctx, b.parts, b.rf, b.configs, name)
		require.NoError(t, err)
		require.ErrorIs(t, resps[name].Err, b.want, name)
		require.NotEmpty(t, resps[name].ErrMessage, name)
	}
	require.Equal(t, []string{"orders"}, queryText(t, c, "SELECT topic FROM sys.topics ORDER BY topic"), "a refused create creates nothing")

	resp, err = adm.CreateTopic(ctx, -1, -1, map[string]*string{
		"retention.bytes": kmsg.StringPtr("2097152"), "max.message.bytes": kmsg.StringPtr("1048588"), "cleanup.policy": kmsg.StringPtr("delete"),
	}, "sized")
	require.NoError(t, err)
	require.NoError(t, resp.Err)
	require.Contains(t, showCreate(t, a, "sized"), "retention_storage_mb = 2")

	out := kcat(t, a, "", "-L")
	require.Contains(t, out, `topic "orders" with 3 partitions`)
	require.Contains(t, out, `topic "sized" with 1 partitions`)
}

// TestKafkaDescribeConfigs: a topic created by SQL is described with its
// retention (retention.ms, retention.bytes per partition) and the fixed
// configs; a topic without a size retention has retention.bytes -1 and
// the default retention; broker 0 is described; a missing topic is
// UNKNOWN_TOPIC_OR_PARTITION.
func TestKafkaDescribeConfigs(t *testing.T) {
	a := startKafkaServer(t, nil)
	c := connect(t, a)
	exec(t, c, "CREATE TOPIC kept WITH (retention_period = Interval('PT3H'), retention_storage_mb = 5)")
	exec(t, c, "CREATE TOPIC plain")
	adm := kadm.NewClient(kafkaClient(t, a))
	ctx := testCtx(t)
	rcs, err := adm.DescribeTopicConfigs(ctx, "kept", "plain")
	require.NoError(t, err)
	vals := map[string]map[string]string{}
	for _, rc := range rcs {
		require.NoError(t, rc.Err)
		vals[rc.Name] = map[string]string{}
		for _, cfg := range rc.Configs {
			vals[rc.Name][cfg.Key] = cfg.MaybeValue()
		}
	}
	require.Equal(t, map[string]string{
		"retention.ms": "10800000", "retention.bytes": "5242880", "max.message.bytes": "12582912",
		"cleanup.policy": "delete", "message.timestamp.type": "CreateTime",
	}, vals["kept"])
	require.Equal(t, "64800000", vals["plain"]["retention.ms"])
	require.Equal(t, "-1", vals["plain"]["retention.bytes"])

	missing, err := adm.DescribeTopicConfigs(ctx, "missing")
	require.NoError(t, err)
	require.ErrorIs(t, missing[0].Err, kerr.UnknownTopicOrPartition)

	brokers, err := adm.DescribeBrokerConfigs(ctx, 0)
	require.NoError(t, err)
	require.NoError(t, brokers[0].Err)
	v, err := brokers.On("0", nil)
	require.NoError(t, err)
	found := false
	for _, cfg := range v.Configs {
		if cfg.Key == "auto.create.topics.enable" {
			found = true
			require.Equal(t, "false", cfg.MaybeValue())
		}
	}
	require.True(t, found, "broker configs: %v", v.Configs)
}

// TestKafkaDeleteTopics: DeleteTopics drops the topic (SQL then gets
// 42P01); a missing topic is UNKNOWN_TOPIC_OR_PARTITION.
func TestKafkaDeleteTopics(t *testing.T) {
	a := startKafkaServer(t, nil)
	c := connect(t, a)
	fillTopic(t, c, "gone", 2, 3)
	adm := kadm.NewClient(kafkaClient(t, a))
	ctx := testCtx(t)
	resps, err := adm.DeleteTopics(ctx, "gone", "never")
	require.NoError(t, err)
	require.NoError(t, resps["gone"].Err)
	require.ErrorIs(t, resps["never"].Err, kerr.UnknownTopicOrPartition)
	_, err = c.Exec(context.Background(), "SELECT * FROM gone")
	require.Equal(t, "42P01", pgCode(err), "%v", err)
}

// TestKafkaCreatePartitions: CreatePartitions grows a topic (max active
// partitions with it) that SQL then sees, and what was written stays;
// ValidateOnly changes nothing; a count that does not grow and an
// auto-partitioned topic are INVALID_PARTITIONS.
func TestKafkaCreatePartitions(t *testing.T) {
	a := startKafkaServer(t, nil)
	c := connect(t, a)
	fillTopic(t, c, "grow", 2, 4)
	exec(t, c, "CREATE TOPIC auto WITH (auto_partitioning_strategy = 'scale_up', max_active_partitions = 4)")
	adm := kadm.NewClient(kafkaClient(t, a))
	ctx := testCtx(t)
	parts := "SELECT partition FROM sys.partitions WHERE topic = 'grow' ORDER BY partition"

	v, err := adm.ValidateUpdatePartitions(ctx, 5, "grow")
	require.NoError(t, err)
	require.NoError(t, v["grow"].Err)
	require.Equal(t, []string{"0", "1"}, queryText(t, c, parts), "ValidateOnly changes nothing")

	r, err := adm.UpdatePartitions(ctx, 3, "grow")
	require.NoError(t, err)
	require.NoError(t, r["grow"].Err)
	require.Equal(t, []string{"0", "1", "2"}, queryText(t, c, parts))
	r, err = adm.CreatePartitions(ctx, 2, "grow")
	require.NoError(t, err)
	require.NoError(t, r["grow"].Err)
	require.Equal(t, []string{"0", "1", "2", "3", "4"}, queryText(t, c, parts))
	require.Equal(t, []string{"4"}, queryText(t, c, "SELECT count(*) FROM grow"))

	r, err = adm.UpdatePartitions(ctx, 5, "grow")
	require.NoError(t, err)
	require.ErrorIs(t, r["grow"].Err, kerr.InvalidPartitions)
	r, err = adm.UpdatePartitions(ctx, 8, "auto")
	require.NoError(t, err)
	require.ErrorIs(t, r["auto"].Err, kerr.InvalidPartitions)
	require.True(t, strings.Contains(r["auto"].ErrMessage, "auto-partitioned"), r["auto"].ErrMessage)
}

// TestKafkaDescribeCluster: DescribeCluster names the cluster topicgate
// of one broker, 0 at the address the client reached, its controller.
func TestKafkaDescribeCluster(t *testing.T) {
	a := startKafkaServer(t, nil)
	req := kmsg.NewPtrDescribeClusterRequest()
	resp, err := req.RequestWith(testCtx(t), kafkaClient(t, a))
	require.NoError(t, err)
	require.Equal(t, int16(0), resp.ErrorCode)
	require.Equal(t, []any{"topicgate", int32(0)}, []any{resp.ClusterID, resp.ControllerID})
	require.Len(t, resp.Brokers, 1)
	b := resp.Brokers[0]
	require.Equal(t, int32(0), b.NodeID)
	require.Equal(t, a.KafkaAddr(), fmt.Sprintf("%s:%d", b.Host, b.Port))
}

// TestKafkaAdminAuthz: the admin APIs take SQL's privileges. A role
// without CREATE on schema public cannot create topics, nor delete or
// grow one it does not own (TOPIC_AUTHORIZATION_FAILED), nor describe a
// topic it may not read, nor describe the broker
// (CLUSTER_AUTHORIZATION_FAILED); once granted CREATE it creates a topic
// it owns, and so may delete it.
func TestKafkaAdminAuthz(t *testing.T) {
	cfg := testConfig(t)
	cfg.KafkaListen, cfg.KafkaUser = "127.0.0.1:0", "maker"
	a := startServer(t, cfg)
	c := connect(t, a)
	exec(t, c, "CREATE ROLE maker LOGIN")
	exec(t, c, "CREATE TOPIC theirs")
	adm := kadm.NewClient(kafkaClient(t, a))
	ctx := testCtx(t)

	created, err := adm.CreateTopics(ctx, 1, -1, nil, "mine")
	require.NoError(t, err)
	require.ErrorIs(t, created["mine"].Err, kerr.TopicAuthorizationFailed)
	deleted, err := adm.DeleteTopics(ctx, "theirs")
	require.NoError(t, err)
	require.ErrorIs(t, deleted["theirs"].Err, kerr.TopicAuthorizationFailed)
	grown, err := adm.UpdatePartitions(ctx, 2, "theirs")
	require.NoError(t, err)
	require.ErrorIs(t, grown["theirs"].Err, kerr.TopicAuthorizationFailed)
	// kadm returns an authorization failure of a resource as the error.
	_, err = adm.DescribeTopicConfigs(ctx, "theirs")
	require.ErrorIs(t, err, kerr.TopicAuthorizationFailed)
	_, err = adm.DescribeBrokerConfigs(ctx, 0)
	require.ErrorIs(t, err, kerr.ClusterAuthorizationFailed)
	require.Equal(t, []string{"theirs"}, queryText(t, c, "SELECT topic FROM sys.topics ORDER BY topic"))

	exec(t, c, "GRANT CREATE ON SCHEMA public TO maker")
	created, err = adm.CreateTopics(ctx, 1, -1, nil, "mine")
	require.NoError(t, err)
	require.NoError(t, created["mine"].Err, created["mine"].ErrMessage)
	// maker is no superuser: dropping the topic proves it owns it.
	deleted, err = adm.DeleteTopics(ctx, "mine")
	require.NoError(t, err)
	require.NoError(t, deleted["mine"].Err)
}

// TestKafkaSaramaClusterAdmin: sarama's ClusterAdmin creates a topic
// (SQL sees its partitions), lists it with its configs (ListTopics reads
// them with DescribeConfigs) and deletes it.
func TestKafkaSaramaClusterAdmin(t *testing.T) {
	a := startKafkaServer(t, nil)
	cfg := sarama.NewConfig()
	cfg.Version = sarama.V3_6_0_0
	adm, err := sarama.NewClusterAdmin([]string{a.KafkaAddr()}, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { adm.Close() })
	require.NoError(t, adm.CreateTopic("events", &sarama.TopicDetail{NumPartitions: 2, ReplicationFactor: 1,
		ConfigEntries: map[string]*string{"retention.ms": kmsg.StringPtr("3600000")}}, false))
	c := connect(t, a)
	require.Equal(t, []string{"0", "1"}, queryText(t, c, "SELECT partition FROM sys.partitions WHERE topic = 'events' ORDER BY partition"))
	topics, err := adm.ListTopics()
	require.NoError(t, err)
	require.Equal(t, int32(2), topics["events"].NumPartitions)
	require.Equal(t, "3600000", *topics["events"].ConfigEntries["retention.ms"])
	require.Error(t, adm.CreateTopic("events", &sarama.TopicDetail{NumPartitions: 1, ReplicationFactor: 1}, false))
	require.NoError(t, adm.DeleteTopic("events"))
	require.Empty(t, queryText(t, c, "SELECT topic FROM sys.topics WHERE topic = 'events'"))
}
