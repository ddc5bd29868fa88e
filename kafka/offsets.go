package kafka

import (
	"context"
	"errors"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"topicgate/planner/plantree"
	"topicgate/topicstore"
)

// Offsets. A group's committed offset in a partition is the position of
// the topic's consumer of the group's name, the same a SQL read WITH
// (CONSUMER = group) moves: OffsetCommit is one synced store commit of
// the positions, OffsetFetch reads back the stored ones (-1 where the
// consumer has none: the client applies auto.offset.reset), OffsetDelete
// forgets them. Kafka's per-offset metadata string is not kept (it reads
// back empty).

// offsetCommit answers OffsetCommit. The member must be one of the
// group's at its generation (or, for a group without members here, a
// simple commit: generation -1, no member id); each topic's consumer is
// created the first time the group commits to it; the valid partitions'
// positions are committed in one synced store commit before the answer.
func (c *conn) offsetCommit(ctx context.Context, req *kmsg.OffsetCommitRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.OffsetCommitResponse)
	gen := req.Generation
	if req.Version == 0 {
		gen = -1
	}
	code := c.s.route.call(ctx, &groupCall{Op: "commitCheck", Group: req.Group, Member: req.MemberID, Gen: gen}).Code
	c.barrier(ctx)
	var ups []topicstore.PositionUpdate
	var at []*kmsg.OffsetCommitResponseTopicPartition
	var used []topicstore.TopicInfo
	for _, rt := range req.Topics {
		t := kmsg.NewOffsetCommitResponseTopic()
		t.Topic = rt.Topic
		terr := codeErr(code)
		var info topicstore.TopicInfo
		if terr == nil {
			info, terr = c.groupTopic(ctx, rt.Topic, req.Group, true)
		}
		for _, rp := range rt.Partitions {
			p := kmsg.NewOffsetCommitResponseTopicPartition()
			p.Partition = rp.Partition
			err := terr
			if err == nil {
				err = commitable(&info, rp.Partition, rp.Offset)
			}
			p.ErrorCode = codeOf(err)
			t.Partitions = append(t.Partitions, p)
			if err == nil {
				ups = append(ups, topicstore.PositionUpdate{Topic: rt.Topic, Consumer: req.Group,
					Partition: rp.Partition, Offset: rp.Offset, Expect: -1})
			}
		}
		if terr == nil {
			used = append(used, info)
		}
		resp.Topics = append(resp.Topics, t)
	}
	for i := range resp.Topics {
		for j := range resp.Topics[i].Partitions {
			if resp.Topics[i].Partitions[j].ErrorCode == 0 {
				at = append(at, &resp.Topics[i].Partitions[j])
			}
		}
	}
	if len(ups) == 0 {
		return resp
	}
	if _, err := c.s.cfg.Store.Commit(ctx, &topicstore.CommitRequest{Positions: ups}); err != nil {
		c.s.log.Warn("kafka: offset commit failed", "group", req.Group, "err", err)
		for _, p := range at {
			p.ErrorCode = codeOf(err)
		}
		return resp
	}
	now := time.Now()
	for i := range used {
		c.s.touchGroup(ctx, &used[i], req.Group, now)
	}
	return resp
}

// codeErr is a Kafka error code as an error (nil for 0).
func codeErr(code int16) error {
	if code == 0 {
		return nil
	}
	return kerr.ErrorForCode(code)
}

// commitable checks a committed offset against the partition: it must
// exist and the offset lie in [0, end] (a position is the next offset
// read).
func commitable(info *topicstore.TopicInfo, part int32, off int64) error {
	pi := partitionOf(info, part)
	if pi == nil {
		return topicstore.ErrPartitionNotFound
	}
	if off < 0 || off > pi.EndOffset {
		return refuse(kerr.OffsetOutOfRange, "offset %d is outside partition %d's [0, %d]", off, part, pi.EndOffset)
	}
	return nil
}

// groupTopic checks that the connection may act as group on topic
// (SELECT on it, USAGE on its consumer) and returns the topic; with
// create, the consumer is created when the topic has none of that name
// (as ALTER TOPIC ... ADD CONSUMER, with its owner check).
func (c *conn) groupTopic(ctx context.Context, topic, group string, create bool) (topicstore.TopicInfo, error) {
	st := c.s.cfg.Store
	info, err := st.Topic(topic)
	if err == nil {
		err = servable(&info)
	}
	if err == nil {
		err = c.authorize(ctx, topic, false)
	}
	if err != nil {
		return info, err
	}
	if create && consumerConfig(&info, group) == nil {
		if err := c.addConsumer(ctx, topic, group); err != nil {
			return info, err
		}
		if info, err = st.Topic(topic); err != nil {
			return info, err
		}
	}
	if c.s.cfg.Auth != nil && consumerConfig(&info, group) != nil {
		acc := plantree.Access{Topic: topic, Consumer: group, Read: true}
		if err := c.s.cfg.Auth.Check(ctx, c.id, []plantree.Access{acc}); err != nil {
			return info, refuse(kerr.GroupAuthorizationFailed, "%v", err)
		}
	}
	return info, nil
}

// consumerConfig is info's consumer named name, nil when there is none.
func consumerConfig(info *topicstore.TopicInfo, name string) *topicstore.ConsumerConfig {
	for i := range info.Config.Consumers {
		if info.Config.Consumers[i].Name == name {
			return &info.Config.Consumers[i]
		}
	}
	return nil
}

// addConsumer adds the streaming consumer group to topic, not important
// (it never holds retention back), with the checks and default
// privileges of ALTER TOPIC ... ADD CONSUMER. A consumer added meanwhile
// (another member, another gateway) is fine.
func (c *conn) addConsumer(ctx context.Context, topic, group string) error {
	add := func(cfg *topicstore.TopicConfig) error {
		for _, cc := range cfg.Consumers {
			if cc.Name == group {
				return topicstore.ErrConsumerExists
			}
		}
		cfg.Consumers = append(cfg.Consumers, topicstore.ConsumerConfig{Name: group, Origin: originKafka, UsedAt: time.Now()})
		return nil
	}
	fix := func(old, cfg *topicstore.TopicConfig) {}
	if a := c.s.cfg.Auth; a != nil {
		if err := a.CheckOwner(ctx, c.id, topic); err != nil {
			return refuse(kerr.GroupAuthorizationFailed, "creating consumer %s of topic %s: %v", group, topic, err)
		}
		var err error
		if fix, err = a.PrepareAlter(ctx, c.id, topic, add); err != nil {
			return err
		}
	}
	err := c.s.cfg.Store.AlterTopic(ctx, topic, func(cfg *topicstore.TopicConfig) error {
		old := topicstore.CloneConfig(*cfg)
		if err := add(cfg); err != nil {
			return err
		}
		fix(&old, cfg)
		return nil
	})
	if errors.Is(err, topicstore.ErrConsumerExists) {
		return nil
	}
	return err
}

// offsetFetch answers OffsetFetch for one group (v1–v7) or several (v8):
// each partition's committed offset, -1 for a partition the consumer has
// no stored position in (never committed, or forgotten by OffsetDelete)
// and for a topic the group has no consumer of. With RequireStable (v7+)
// a group whose offsets a transaction open on this gateway stages is
// UNSTABLE_OFFSET_COMMIT (the client retries once it ended); a
// transaction open on another gateway is not seen.
func (c *conn) offsetFetch(ctx context.Context, req *kmsg.OffsetFetchRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.OffsetFetchResponse)
	c.barrier(ctx)
	if req.Version < 8 {
		if req.RequireStable && c.s.txns.pendingGroup(req.Group) {
			resp.ErrorCode = kerr.UnstableOffsetCommit.Code
			return resp
		}
		resp.Topics = c.groupOffsets(ctx, req.Group, req.Topics)
		return resp
	}
	for _, rg := range req.Groups {
		g := kmsg.NewOffsetFetchResponseGroup()
		g.Group = rg.Group
		if req.RequireStable && c.s.txns.pendingGroup(rg.Group) {
			g.ErrorCode = kerr.UnstableOffsetCommit.Code
			resp.Groups = append(resp.Groups, g)
			continue
		}
		var topics []kmsg.OffsetFetchRequestTopic
		if rg.Topics != nil {
			topics = []kmsg.OffsetFetchRequestTopic{}
			for _, t := range rg.Topics {
				rt := kmsg.NewOffsetFetchRequestTopic()
				rt.Topic, rt.Partitions = t.Topic, t.Partitions
				topics = append(topics, rt)
			}
		}
		for _, t := range c.groupOffsets(ctx, rg.Group, topics) {
			gt := kmsg.NewOffsetFetchResponseGroupTopic()
			gt.Topic = t.Topic
			for _, p := range t.Partitions {
				gp := kmsg.NewOffsetFetchResponseGroupTopicPartition()
				gp.Partition, gp.Offset, gp.LeaderEpoch, gp.Metadata, gp.ErrorCode = p.Partition, p.Offset, p.LeaderEpoch, p.Metadata, p.ErrorCode
				gt.Partitions = append(gt.Partitions, gp)
			}
			g.Topics = append(g.Topics, gt)
		}
		resp.Groups = append(resp.Groups, g)
	}
	return resp
}

// groupOffsets are group's committed offsets of the partitions asked for;
// topics nil asks for every topic the group has a consumer of.
func (c *conn) groupOffsets(ctx context.Context, group string, topics []kmsg.OffsetFetchRequestTopic) []kmsg.OffsetFetchResponseTopic {
	if topics == nil {
		for _, info := range c.s.cfg.Store.Topics() {
			if consumerConfig(&info, group) == nil || servable(&info) != nil {
				continue
			}
			rt := kmsg.NewOffsetFetchRequestTopic()
			rt.Topic = info.Config.Name
			for _, p := range info.Partitions {
				rt.Partitions = append(rt.Partitions, p.ID)
			}
			topics = append(topics, rt)
		}
	}
	var out []kmsg.OffsetFetchResponseTopic
	for _, rt := range topics {
		t := kmsg.NewOffsetFetchResponseTopic()
		t.Topic = rt.Topic
		info, err := c.groupTopic(ctx, rt.Topic, group, false)
		var pos map[int32]int64
		if err == nil && consumerConfig(&info, group) != nil {
			pos, err = c.s.cfg.Store.StoredPositions(rt.Topic, group)
			if errors.Is(err, topicstore.ErrConsumerNotFound) {
				err = nil // dropped meanwhile (DeleteGroups): nothing committed
			}
		}
		for _, part := range rt.Partitions {
			p := kmsg.NewOffsetFetchResponseTopicPartition()
			p.Partition, p.Offset, p.LeaderEpoch = part, -1, -1
			empty := ""
			p.Metadata = &empty
			if off, ok := pos[part]; ok && err == nil {
				p.Offset = off
			}
			if err != nil {
				p.ErrorCode = codeOf(err)
			}
			t.Partitions = append(t.Partitions, p)
		}
		out = append(out, t)
	}
	return out
}

// offsetDelete answers OffsetDelete: the group's committed offsets of the
// partitions named are forgotten (PositionUpdate.Forget), so OffsetFetch
// answers -1 for them again and a SQL read as the consumer starts them
// from the start; the consumer itself stays (DeleteGroups drops it). The
// checks are OffsetCommit's (SELECT on the topic, USAGE on the
// consumer); a topic members here subscribe to or are assigned is
// GROUP_SUBSCRIBED_TO_TOPIC, and a group with members of another
// protocol than Kafka's consumer one NON_EMPTY_GROUP (its topics are not
// known), as Kafka answers. A partition the group has no offset in
// (never committed, or no consumer on the topic) answers no error. The
// forgets are one synced store commit.
func (c *conn) offsetDelete(ctx context.Context, req *kmsg.OffsetDeleteRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.OffsetDeleteResponse)
	c.barrier(ctx)
	sub := c.s.route.call(ctx, &groupCall{Op: "subscribed", Group: req.Group})
	live, subscribed, known := sub.Live, sub.Topics, sub.Known
	if sub.Code != 0 {
		resp.ErrorCode = sub.Code
		return resp
	}
	switch {
	case req.Group == "":
		resp.ErrorCode = kerr.InvalidGroupID.Code
		return resp
	case live && !known:
		resp.ErrorCode = kerr.NonEmptyGroup.Code
		return resp
	case !live && len(c.consumerTopics(req.Group)) == 0:
		resp.ErrorCode = kerr.GroupIDNotFound.Code
		return resp
	}
	type forget struct{ topic, part int }
	var ups []topicstore.PositionUpdate
	var at []forget
	for ti, rt := range req.Topics {
		t := kmsg.NewOffsetDeleteResponseTopic()
		t.Topic = rt.Topic
		info, terr := c.groupTopic(ctx, rt.Topic, req.Group, false)
		if terr == nil && subscribed[rt.Topic] {
			terr = refuse(kerr.GroupSubscribedToTopic, "members of group %s consume topic %s", req.Group, rt.Topic)
		}
		cc := consumerConfig(&info, req.Group)
		for _, rp := range rt.Partitions {
			p := kmsg.NewOffsetDeleteResponseTopicPartition()
			p.Partition = rp.Partition
			err := terr
			if err == nil && partitionOf(&info, rp.Partition) == nil {
				err = topicstore.ErrPartitionNotFound
			}
			p.ErrorCode = codeOf(err)
			if err == nil && cc != nil && !cc.Shared {
				ups = append(ups, topicstore.PositionUpdate{Topic: rt.Topic, Consumer: req.Group,
					Partition: rp.Partition, Expect: -1, Forget: true})
				at = append(at, forget{ti, len(t.Partitions)})
			}
			t.Partitions = append(t.Partitions, p)
		}
		resp.Topics = append(resp.Topics, t)
	}
	if len(ups) == 0 {
		return resp
	}
	if _, err := c.s.cfg.Store.Commit(ctx, &topicstore.CommitRequest{Positions: ups}); err != nil {
		c.s.log.Warn("kafka: offset delete failed", "group", req.Group, "err", err)
		for _, f := range at {
			resp.Topics[f.topic].Partitions[f.part].ErrorCode = codeOf(err)
		}
	}
	return resp
}
