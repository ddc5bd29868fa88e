package kafka

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"topicgate/planner/topicopts"
	"topicgate/topicstore"
)

// handleAdmin answers the admin APIs: CreateTopics, DeleteTopics,
// CreatePartitions, DescribeConfigs and DescribeCluster.
func (c *conn) handleAdmin(ctx context.Context, req kmsg.Request) kmsg.Response {
	switch req := req.(type) {
	case *kmsg.CreateTopicsRequest:
		return c.createTopics(ctx, req)
	case *kmsg.DeleteTopicsRequest:
		return c.deleteTopics(ctx, req)
	case *kmsg.CreatePartitionsRequest:
		return c.createPartitions(ctx, req)
	case *kmsg.DescribeConfigsRequest:
		return c.describeConfigs(ctx, req)
	case *kmsg.DescribeClusterRequest:
		return c.describeCluster(req)
	}
	return nil
}

// createTopics answers CreateTopics as SQL's CREATE TOPIC: the same
// checks of the name and the partition count, the same privilege (CREATE
// on schema public, authz.PrepareCreate, TOPIC_AUTHORIZATION_FAILED
// otherwise) and the creator owns the topic. ValidateOnly runs every
// check and creates nothing.
func (c *conn) createTopics(ctx context.Context, req *kmsg.CreateTopicsRequest) kmsg.Response {
	c.barrier(ctx)
	resp := req.ResponseKind().(*kmsg.CreateTopicsResponse)
	seen := map[string]int{}
	for _, rt := range req.Topics {
		seen[rt.Topic]++
	}
	for _, rt := range req.Topics {
		t := kmsg.NewCreateTopicsResponseTopic()
		t.Topic = rt.Topic
		t.NumPartitions, t.ReplicationFactor = -1, -1
		var err error
		if seen[rt.Topic] > 1 {
			err = refuse(kerr.InvalidRequest, "topic %s is named more than once in the request", rt.Topic)
		} else {
			var cfg topicstore.TopicConfig
			cfg, err = c.createTopic(ctx, &rt, req.ValidateOnly)
			if err == nil {
				t.NumPartitions, t.ReplicationFactor = int32(cfg.MinActivePartitions), 1
				for _, kc := range topicKafkaConfigs(&cfg) {
					e := kmsg.NewCreateTopicsResponseTopicConfig()
					e.Name, e.Value, e.ReadOnly, e.Source = kc.name, kmsg.StringPtr(kc.value), true, int8(kc.source)
					t.Configs = append(t.Configs, e)
				}
			}
		}
		t.ErrorCode, t.ErrorMessage = codeOf(err), messageOf(err)
		resp.Topics = append(resp.Topics, t)
	}
	return resp
}

// createTopic checks and (unless validateOnly) creates one topic of a
// CreateTopics request, returning its configuration.
func (c *conn) createTopic(ctx context.Context, rt *kmsg.CreateTopicsRequestTopic, validateOnly bool) (topicstore.TopicConfig, error) {
	cfg, err := newTopicConfig(rt)
	if err != nil {
		return cfg, err
	}
	if a := c.s.cfg.Auth; a != nil {
		if err := a.PrepareCreate(ctx, c.id, &cfg); err != nil {
			return cfg, err
		}
	}
	if _, err := c.s.cfg.Store.Topic(cfg.Name); err == nil {
		return cfg, refuse(kerr.TopicAlreadyExists, "topic %s already exists", cfg.Name)
	}
	if validateOnly {
		check := topicstore.CloneConfig(cfg)
		if err := topicstore.NormalizeConfig(&check); err != nil {
			return cfg, refuse(kerr.InvalidConfig, "%v", err)
		}
		return cfg, nil
	}
	err = c.s.cfg.Store.CreateTopic(ctx, cfg)
	if errors.Is(err, topicstore.ErrTopicExists) {
		err = refuse(kerr.TopicAlreadyExists, "topic %s already exists", cfg.Name)
	}
	return cfg, err
}

// newTopicConfig is the topic a CreateTopics entry describes:
// NumPartitions partitions (-1: 1, Kafka's num.partitions) as
// min_active_partitions and max_active_partitions, a replication factor
// of -1 or 1 (the one broker; the store replicates by itself), a replica
// assignment only onto broker 0, and the configs kafkaTopicConfig maps.
func newTopicConfig(rt *kmsg.CreateTopicsRequestTopic) (topicstore.TopicConfig, error) {
	cfg := topicstore.TopicConfig{Name: rt.Topic}
	if err := topicopts.ValidateTopicName(rt.Topic); err != nil {
		return cfg, refuse(kerr.InvalidTopicException, "%v", err)
	}
	n := int(rt.NumPartitions)
	if len(rt.ReplicaAssignment) > 0 {
		if rt.NumPartitions != -1 || rt.ReplicationFactor != -1 {
			return cfg, refuse(kerr.InvalidRequest, "both a replica assignment and a partition count or replication factor are given")
		}
		for i, ra := range rt.ReplicaAssignment {
			if int(ra.Partition) != i || len(ra.Replicas) != 1 || ra.Replicas[0] != brokerID {
				return cfg, refuse(kerr.InvalidReplicaAssignment,
					"the cluster has one broker (%d): a replica assignment must give partitions 0, 1, ... in order one replica each, on broker %d", brokerID, brokerID)
			}
		}
		n = len(rt.ReplicaAssignment)
	}
	switch {
	case rt.ReplicationFactor != -1 && rt.ReplicationFactor != 1:
		return cfg, refuse(kerr.InvalidReplicationFactor,
			"replication factor %d is larger than the cluster's 1 broker: use -1 or 1 (the store replicates each topic by itself)", rt.ReplicationFactor)
	case n == -1:
		n = 1
	case n < 1 || n > topicstore.MaxPartitions:
		return cfg, refuse(kerr.InvalidPartitions, "the partition count must be between 1 and %d, not %d", topicstore.MaxPartitions, n)
	}
	cfg.MinActivePartitions, cfg.MaxActivePartitions = n, n
	for _, kc := range rt.Configs {
		if err := applyKafkaConfig(&cfg, kc.Name, kc.Value); err != nil {
			return cfg, err
		}
	}
	return cfg, nil
}

// applyKafkaConfig sets the topic option a Kafka topic config maps to:
// retention.ms (retention_period, at least 1000 ms; -1, forever, is not
// supported), retention.bytes (retention_storage_mb: a whole number of
// MiB per partition, or -1 for none), max.message.bytes (accepted up to
// the store's 12 MiB limit, which stays the limit), cleanup.policy
// (delete only). Anything else is INVALID_CONFIG; a null value keeps the
// default.
func applyKafkaConfig(cfg *topicstore.TopicConfig, name string, value *string) error {
	if value == nil {
		return nil
	}
	bad := func(format string, args ...any) error {
		return refuse(kerr.InvalidConfig, "%s=%s: "+format, append([]any{name, *value}, args...)...)
	}
	n, nerr := strconv.ParseInt(*value, 10, 64)
	switch name {
	case "retention.ms":
		switch {
		case nerr != nil:
			return bad("not a number of milliseconds")
		case n == -1:
			return bad("keeping messages forever is not supported (a topic's retention_period is finite)")
		case n < 1000 || n > int64(time.Duration(1<<62).Milliseconds()):
			return bad("retention must be at least 1000 ms")
		}
		cfg.RetentionPeriod = time.Duration(n) * time.Millisecond
	case "retention.bytes":
		switch {
		case nerr != nil:
			return bad("not a number of bytes")
		case n == -1:
			cfg.RetentionStorageMB = 0
		case n <= 0 || n%(1<<20) != 0 || n>>20 > 1<<40:
			return bad("must be -1 or a positive whole number of MiB (retention_storage_mb)")
		default:
			cfg.RetentionStorageMB = n >> 20
		}
	case "max.message.bytes":
		if nerr != nil || n < 0 || n > topicstore.MaxMessageSize {
			return bad("must be between 0 and %d (the store's limit on one record)", topicstore.MaxMessageSize)
		}
	case "cleanup.policy":
		if *value != "delete" {
			return bad("only cleanup.policy=delete is supported: topics have no compaction")
		}
	default:
		return bad("config %s is not supported by the Kafka door (retention.ms, retention.bytes, max.message.bytes and cleanup.policy are)", name)
	}
	return nil
}
