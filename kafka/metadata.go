package kafka

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"topicgate/topicstore"
)

// brokerID is every gateway's broker id: each names itself broker 0 and
// the leader of every partition, so a client sends everything to the
// gateway it reached (on a cluster any gateway serves any partition).
const brokerID = 0

// clusterID is what Metadata names the cluster.
const clusterID = "topicgate"

// barrierTimeout bounds the read barrier a request takes on a cluster
// store before it reads.
const barrierTimeout = 5 * time.Second

// barrier waits, on a store that has a read point (the cluster store),
// until this gateway has applied every commit acknowledged before, so a
// request sees what was produced through any gateway. A barrier that
// cannot be had reads the gateway's view as it is.
func (c *conn) barrier(ctx context.Context) {
	if rb, ok := c.s.cfg.Store.(topicstore.ReadBarrier); ok {
		ctx, cancel := context.WithTimeout(ctx, barrierTimeout)
		defer cancel()
		_ = rb.Barrier(ctx)
	}
}

// metadata answers Metadata: broker 0 (this gateway, at the address the
// client reached), and the topics asked for (all when none are named),
// each partition led by broker 0. A topic that does not exist is
// UNKNOWN_TOPIC_OR_PARTITION (no auto-creation); an auto-partitioned one
// is INVALID_TOPIC_EXCEPTION.
func (c *conn) metadata(ctx context.Context, req *kmsg.MetadataRequest) kmsg.Response {
	c.barrier(ctx)
	resp := req.ResponseKind().(*kmsg.MetadataResponse)
	b := kmsg.NewMetadataResponseBroker()
	b.NodeID, b.Host, b.Port = brokerID, c.host, c.port
	resp.Brokers = []kmsg.MetadataResponseBroker{b}
	cid := clusterID
	resp.ClusterID = &cid
	resp.ControllerID = brokerID
	st := c.s.cfg.Store
	all := req.Topics == nil || (req.Version == 0 && len(req.Topics) == 0)
	if all {
		infos := st.Topics()
		sort.Slice(infos, func(i, j int) bool { return infos[i].Config.Name < infos[j].Config.Name })
		for i := range infos {
			if c.describable(ctx, infos[i].Config.Name) != nil {
				continue // as Kafka: a topic the client may not describe is not listed
			}
			resp.Topics = append(resp.Topics, topicMetadata(infos[i].Config.Name, &infos[i], nil))
		}
		return resp
	}
	for _, rt := range req.Topics {
		if rt.Topic == nil {
			t := kmsg.NewMetadataResponseTopic()
			t.TopicID = rt.TopicID
			t.ErrorCode = kerr.UnknownTopicID.Code
			resp.Topics = append(resp.Topics, t)
			continue
		}
		name := *rt.Topic
		info, err := st.Topic(name)
		if err == nil {
			err = c.describable(ctx, name)
		}
		resp.Topics = append(resp.Topics, topicMetadata(name, &info, err))
	}
	return resp
}

// topicMetadata is one topic's entry: its partitions, or err's code.
func topicMetadata(name string, info *topicstore.TopicInfo, err error) kmsg.MetadataResponseTopic {
	t := kmsg.NewMetadataResponseTopic()
	t.Topic = &name
	t.IsInternal = name == ProducerIDTopic
	if err == nil {
		err = servable(info)
	}
	if err != nil {
		t.ErrorCode = codeOf(err)
		return t
	}
	for _, p := range info.Partitions {
		mp := kmsg.NewMetadataResponseTopicPartition()
		mp.Partition = p.ID
		mp.Leader = brokerID
		mp.LeaderEpoch = 0
		mp.Replicas = []int32{brokerID}
		mp.ISR = []int32{brokerID}
		mp.OfflineReplicas = []int32{}
		t.Partitions = append(t.Partitions, mp)
	}
	return t
}

// findCoordinator answers FindCoordinator: this gateway coordinates
// every group and every transactional id it is asked for (group offsets
// and transactional ids' epochs live in the store, so any gateway can).
func (c *conn) findCoordinator(req *kmsg.FindCoordinatorRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.FindCoordinatorResponse)
	code := int16(0)
	var msg *string
	if req.CoordinatorType > 1 || (req.CoordinatorType == 1 && c.s.cfg.Txns == nil) {
		code = kerr.CoordinatorNotAvailable.Code
		s := fmt.Sprintf("the Kafka door does not coordinate keys of type %d", req.CoordinatorType)
		msg = &s
	}
	if req.Version < 4 {
		resp.ErrorCode, resp.ErrorMessage = code, msg
		if code == 0 {
			resp.NodeID, resp.Host, resp.Port = brokerID, c.host, c.port
		} else {
			resp.NodeID = -1
		}
		return resp
	}
	for _, key := range req.CoordinatorKeys {
		co := kmsg.NewFindCoordinatorResponseCoordinator()
		co.Key, co.ErrorCode, co.ErrorMessage = key, code, msg
		if code == 0 {
			co.NodeID, co.Host, co.Port = brokerID, c.host, c.port
		} else {
			co.NodeID = -1
		}
		resp.Coordinators = append(resp.Coordinators, co)
	}
	return resp
}
