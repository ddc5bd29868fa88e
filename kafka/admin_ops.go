package kafka

import (
	"context"
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"topicgate/topicstore"
)

// deleteTopics answers DeleteTopics as SQL's DROP TOPIC of each topic:
// the owner (or a superuser) drops it, anyone else gets
// TOPIC_AUTHORIZATION_FAILED; a topic that does not exist is
// UNKNOWN_TOPIC_OR_PARTITION, one named by topic id (v6) UNKNOWN_TOPIC_ID
// (topic ids are zero).
func (c *conn) deleteTopics(ctx context.Context, req *kmsg.DeleteTopicsRequest) kmsg.Response {
	c.barrier(ctx)
	resp := req.ResponseKind().(*kmsg.DeleteTopicsResponse)
	names := req.TopicNames
	if req.Version >= 6 {
		names = nil
		for _, rt := range req.Topics {
			if rt.Topic == nil {
				t := kmsg.NewDeleteTopicsResponseTopic()
				t.TopicID, t.ErrorCode = rt.TopicID, kerr.UnknownTopicID.Code
				t.ErrorMessage = kmsg.StringPtr("the Kafka door has no topic ids: name the topic")
				resp.Topics = append(resp.Topics, t)
				continue
			}
			names = append(names, *rt.Topic)
		}
	}
	for _, name := range names {
		t := kmsg.NewDeleteTopicsResponseTopic()
		t.Topic = kmsg.StringPtr(name)
		err := c.dropTopic(ctx, name)
		t.ErrorCode, t.ErrorMessage = codeOf(err), messageOf(err)
		resp.Topics = append(resp.Topics, t)
	}
	return resp
}

// dropTopic drops one topic if the connection owns it.
func (c *conn) dropTopic(ctx context.Context, name string) error {
	if _, err := c.s.cfg.Store.Topic(name); err != nil {
		return err
	}
	if a := c.s.cfg.Auth; a != nil {
		if err := a.CheckOwner(ctx, c.id, name); err != nil {
			return err
		}
	}
	return c.s.cfg.Store.DropTopic(ctx, name)
}

// createPartitions answers CreatePartitions as SQL's ALTER TOPIC ... SET
// (min_active_partitions = n): the owner grows a topic to Count
// partitions (max_active_partitions with it when it would be exceeded).
// A count that is not larger than the topic's is INVALID_PARTITIONS, as
// is an auto-partitioned topic (its partitions come from splits);
// ValidateOnly changes nothing.
func (c *conn) createPartitions(ctx context.Context, req *kmsg.CreatePartitionsRequest) kmsg.Response {
	c.barrier(ctx)
	resp := req.ResponseKind().(*kmsg.CreatePartitionsResponse)
	for _, rt := range req.Topics {
		t := kmsg.NewCreatePartitionsResponseTopic()
		t.Topic = rt.Topic
		err := c.growTopic(ctx, &rt, req.ValidateOnly)
		t.ErrorCode, t.ErrorMessage = codeOf(err), messageOf(err)
		resp.Topics = append(resp.Topics, t)
	}
	return resp
}

// growTopic checks and (unless validateOnly) applies one topic's entry
// of CreatePartitions.
func (c *conn) growTopic(ctx context.Context, rt *kmsg.CreatePartitionsRequestTopic, validateOnly bool) error {
	info, err := c.s.cfg.Store.Topic(rt.Topic)
	if err != nil {
		return err
	}
	if a := c.s.cfg.Auth; a != nil {
		if err := a.CheckOwner(ctx, c.id, rt.Topic); err != nil {
			return err
		}
	}
	if servable(&info) != nil {
		return refuse(kerr.InvalidPartitions,
			"topic %s is auto-partitioned: its partitions are added by splits, not by a partition count", rt.Topic)
	}
	for _, as := range rt.Assignment {
		if len(as.Replicas) != 1 || as.Replicas[0] != brokerID {
			return refuse(kerr.InvalidReplicaAssignment, "the cluster has one broker (%d): each new partition has one replica, on it", brokerID)
		}
	}
	have := len(info.Partitions)
	switch {
	case int(rt.Count) <= have:
		return refuse(kerr.InvalidPartitions, "topic %s has %d partitions: the count can only grow (partitions are never removed)", rt.Topic, have)
	case int(rt.Count) > topicstore.MaxPartitions:
		return refuse(kerr.InvalidPartitions, "a topic has at most %d partitions, not %d", topicstore.MaxPartitions, rt.Count)
	case rt.Assignment != nil && len(rt.Assignment) != int(rt.Count)-have:
		return refuse(kerr.InvalidReplicaAssignment, "%d new partitions but %d assignments", int(rt.Count)-have, len(rt.Assignment))
	}
	if validateOnly {
		return nil
	}
	err = c.s.cfg.Store.AlterTopic(ctx, rt.Topic, func(cfg *topicstore.TopicConfig) error {
		if cfg.MinActivePartitions >= int(rt.Count) {
			return refuse(kerr.InvalidPartitions, "topic %s already has %d partitions", rt.Topic, cfg.MinActivePartitions)
		}
		cfg.MinActivePartitions = int(rt.Count)
		if cfg.MaxActivePartitions > 0 && cfg.MaxActivePartitions < cfg.MinActivePartitions {
			cfg.MaxActivePartitions = cfg.MinActivePartitions
		}
		return nil
	})
	if errors.Is(err, topicstore.ErrPartitionsDecrease) {
		err = refuse(kerr.InvalidPartitions, "%v", err)
	}
	return err
}

// describeCluster answers DescribeCluster: the cluster "topicgate" of one
// broker, 0, at the address the client reached, which is its controller.
// Authorized operations are not computed (the int32 minimum, Kafka's
// "not asked").
func (c *conn) describeCluster(req *kmsg.DescribeClusterRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.DescribeClusterResponse)
	resp.EndpointType = req.EndpointType
	if req.EndpointType != 1 && req.Version >= 1 {
		resp.ErrorCode = kerr.UnsupportedEndpointType.Code
		resp.ErrorMessage = kmsg.StringPtr("the Kafka door has brokers only (endpoint type 1), no controller endpoints")
		return resp
	}
	resp.ClusterID, resp.ControllerID = clusterID, brokerID
	b := kmsg.NewDescribeClusterResponseBroker()
	b.NodeID, b.Host, b.Port = brokerID, c.host, c.port
	resp.Brokers = []kmsg.DescribeClusterResponseBroker{b}
	resp.ClusterAuthorizedOperations = -2147483648
	return resp
}
