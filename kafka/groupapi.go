package kafka

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"sort"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"topicgate/sql/pgerror"
	"topicgate/topicstore"
)

// joinGroup answers JoinGroup once the rebalance it starts or joins
// completes (or at once with an error or, v4+, MEMBER_ID_REQUIRED).
func (c *conn) joinGroup(ctx context.Context, req *kmsg.JoinGroupRequest, clientID string) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.JoinGroupResponse)
	resp.Generation = -1
	session := time.Duration(req.SessionTimeoutMillis) * time.Millisecond
	rebalance := time.Duration(req.RebalanceTimeoutMillis) * time.Millisecond
	if req.Version == 0 {
		rebalance = session
	}
	if session <= 0 || rebalance <= 0 {
		resp.ErrorCode = kerr.InvalidSessionTimeout.Code
		return resp
	}
	if req.Group == "" {
		resp.ErrorCode = kerr.InvalidGroupID.Code
		return resp
	}
	jc := &groupCall{Op: "join", Group: req.Group, Member: req.MemberID, ClientID: clientID, ClientHost: c.clientHost(),
		ProtocolType: req.ProtocolType, Protocols: ownProtocols(req.Protocols), Session: session, Rebalance: rebalance,
		RequireKnownID: req.Version >= 4}
	if req.InstanceID != nil {
		jc.Instance = *req.InstanceID
	}
	res := c.s.route.call(ctx, jc)
	resp.ErrorCode, resp.Generation, resp.LeaderID, resp.MemberID = res.Code, res.Generation, res.Leader, res.MemberID
	resp.Members = res.Members
	protocol, pt := res.Protocol, req.ProtocolType
	if res.Code == 0 || req.Version < 7 {
		// Null only where the protocol has a null (v7+), on an error.
		resp.Protocol = &protocol
	}
	if res.Code == 0 {
		resp.ProtocolType = &pt
	}
	return resp
}

// ownProtocols copies a JoinGroup's protocols. A request's bytes alias
// the connection's frame buffer, which the next request is read into,
// and a group keeps a member's metadata as long as the member.
func ownProtocols(ps []kmsg.JoinGroupRequestProtocol) []kmsg.JoinGroupRequestProtocol {
	own := make([]kmsg.JoinGroupRequestProtocol, len(ps))
	for i, p := range ps {
		own[i] = p
		own[i].Metadata = bytes.Clone(p.Metadata)
	}
	return own
}

// ownAssignments copies a SyncGroup's assignments (the group keeps them
// for members that sync later, and for DescribeGroups).
func ownAssignments(as []kmsg.SyncGroupRequestGroupAssignment) []kmsg.SyncGroupRequestGroupAssignment {
	own := make([]kmsg.SyncGroupRequestGroupAssignment, len(as))
	for i, a := range as {
		own[i] = a
		own[i].MemberAssignment = bytes.Clone(a.MemberAssignment)
	}
	return own
}

// clientHost is the client's address as DescribeGroups shows it.
func (c *conn) clientHost() string {
	host, _, err := net.SplitHostPort(c.nc.RemoteAddr().String())
	if err != nil {
		return c.nc.RemoteAddr().String()
	}
	return "/" + host
}

// syncGroup answers SyncGroup with the member's assignment once the
// leader has sent them.
func (c *conn) syncGroup(ctx context.Context, req *kmsg.SyncGroupRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.SyncGroupResponse)
	res := c.s.route.call(ctx, &groupCall{Op: "sync", Group: req.Group, Member: req.MemberID, Gen: req.Generation,
		SyncProtocolType: req.ProtocolType, SyncProtocol: req.Protocol, Assignments: ownAssignments(req.GroupAssignment)})
	resp.ErrorCode, resp.MemberAssignment = res.Code, res.Assignment
	resp.ProtocolType, resp.Protocol = req.ProtocolType, req.Protocol
	if resp.MemberAssignment == nil {
		resp.MemberAssignment = []byte{}
	}
	return resp
}

// heartbeat answers Heartbeat.
func (c *conn) heartbeat(ctx context.Context, req *kmsg.HeartbeatRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.HeartbeatResponse)
	resp.ErrorCode = c.s.route.call(ctx, &groupCall{Op: "heartbeat", Group: req.Group, Member: req.MemberID, Gen: req.Generation}).Code
	return resp
}

// leaveGroup answers LeaveGroup: one member (v0–v2) or a batch of them,
// each by member id or instance id (v3+).
func (c *conn) leaveGroup(ctx context.Context, req *kmsg.LeaveGroupRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.LeaveGroupResponse)
	leave := func(member, instance string) int16 {
		return c.s.route.call(ctx, &groupCall{Op: "leave", Group: req.Group, Member: member, Instance: instance}).Code
	}
	if req.Version < 3 {
		resp.ErrorCode = leave(req.MemberID, "")
		return resp
	}
	for _, m := range req.Members {
		rm := kmsg.NewLeaveGroupResponseMember()
		rm.MemberID, rm.InstanceID = m.MemberID, m.InstanceID
		iid := ""
		if m.InstanceID != nil {
			iid = *m.InstanceID
		}
		rm.ErrorCode = leave(m.MemberID, iid)
		resp.Members = append(resp.Members, rm)
	}
	return resp
}

// describeGroups answers DescribeGroups from this gateway's membership; a
// group with no members here but a consumer in the store is Empty.
func (c *conn) describeGroups(ctx context.Context, req *kmsg.DescribeGroupsRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.DescribeGroupsResponse)
	c.barrier(ctx)
	stored := c.storedGroups(ctx)
	for _, name := range req.Groups {
		d := kmsg.NewDescribeGroupsResponseGroup()
		if rep := c.s.route.call(ctx, &groupCall{Op: "describe", Group: name}); rep.Describe != nil {
			d = *rep.Describe
		} else {
			d.Group, d.ErrorCode = name, rep.Code
		}
		if d.State == "Dead" && stored[name] {
			d.State = stateEmpty
		}
		resp.Groups = append(resp.Groups, d)
	}
	return resp
}

// listGroups answers ListGroups: the groups with members on this gateway
// and, Empty, every other consumer of a topic the connection may read
// (a Kafka group is a topicgate consumer); v4's StatesFilter applies.
func (c *conn) listGroups(ctx context.Context, req *kmsg.ListGroupsRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.ListGroupsResponse)
	c.barrier(ctx)
	live := c.s.route.listAll(ctx)
	seen := map[string]bool{}
	for _, g := range live {
		seen[g.Group] = true
	}
	for name := range c.storedGroups(ctx) {
		if !seen[name] {
			lg := kmsg.NewListGroupsResponseGroup()
			lg.Group, lg.GroupState = name, stateEmpty
			live = append(live, lg)
		}
	}
	sort.Slice(live, func(i, j int) bool { return live[i].Group < live[j].Group })
	for _, g := range live {
		if len(req.StatesFilter) == 0 || slices.ContainsFunc(req.StatesFilter, func(s string) bool { return s == g.GroupState }) {
			resp.Groups = append(resp.Groups, g)
		}
	}
	return resp
}

// storedGroups are the names of the streaming consumers of the topics
// the connection may read.
func (c *conn) storedGroups(ctx context.Context) map[string]bool {
	out := map[string]bool{}
	for _, info := range c.s.cfg.Store.Topics() {
		if servable(&info) != nil || c.authorize(ctx, info.Config.Name, false) != nil {
			continue
		}
		for _, cc := range info.Config.Consumers {
			if !cc.Shared {
				out[cc.Name] = true
			}
		}
	}
	return out
}

// consumerTopics are the topics group is on, by name: those the door
// serves with a streaming consumer of the group's name (what OffsetFetch
// lists and ListGroups shows). A shared consumer is no Kafka group, and
// the door never made a consumer on a topic it does not serve.
func (c *conn) consumerTopics(group string) []string {
	var out []string
	for _, info := range c.s.cfg.Store.Topics() {
		if cc := consumerConfig(&info, group); cc != nil && !cc.Shared && servable(&info) == nil {
			out = append(out, info.Config.Name)
		}
	}
	sort.Strings(out)
	return out
}

// deleteGroups answers DeleteGroups, each group as deleteGroup decides;
// v3 gives the error's words too.
func (c *conn) deleteGroups(ctx context.Context, req *kmsg.DeleteGroupsRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.DeleteGroupsResponse)
	c.barrier(ctx)
	for _, name := range req.Groups {
		g := kmsg.NewDeleteGroupsResponseGroup()
		g.Group = name
		err := c.deleteGroup(ctx, name)
		g.ErrorCode = codeOf(err)
		if req.Version >= 3 {
			g.ErrorMessage = messageOf(err)
		}
		resp.Groups = append(resp.Groups, g)
	}
	return resp
}

// deleteGroup deletes group name: with no members here, its consumer is
// dropped from every topic it is on (consumerTopics), as SQL's ALTER
// TOPIC t DROP CONSUMER name with its checks (owning the topic). Every
// topic's checks pass before anything is dropped: one that fails is
// GROUP_AUTHORIZATION_FAILED, and nothing changed. The drops are one
// store change per topic (no store change spans topics); one that fails
// stops the rest, and the error says which topics were done and which
// not: a retry finishes the job.
func (c *conn) deleteGroup(ctx context.Context, name string) error {
	if name == "" {
		return refuse(kerr.InvalidGroupID, "the group id is empty")
	}
	switch rep := c.s.route.call(ctx, &groupCall{Op: "deleteBegin", Group: name}); {
	case rep.Code != 0:
		return codeErr(rep.Code)
	case rep.Live:
		return refuse(kerr.NonEmptyGroup, "group %s has members: it is deleted once they leave", name)
	}
	defer c.s.route.call(ctx, &groupCall{Op: "deleteEnd", Group: name})
	topics := c.consumerTopics(name)
	if len(topics) == 0 {
		return refuse(kerr.GroupIDNotFound, "no topic the Kafka door serves has a consumer %s", name)
	}
	drop := func(cfg *topicstore.TopicConfig) error {
		i := slices.IndexFunc(cfg.Consumers, func(cc topicstore.ConsumerConfig) bool { return cc.Name == name && !cc.Shared })
		if i < 0 {
			return topicstore.ErrConsumerNotFound
		}
		cfg.Consumers = slices.Delete(cfg.Consumers, i, i+1)
		return nil
	}
	fixes := make([]func(old, cfg *topicstore.TopicConfig), len(topics))
	for i, t := range topics {
		fixes[i] = func(old, cfg *topicstore.TopicConfig) {}
		a := c.s.cfg.Auth
		if a == nil {
			continue
		}
		err := a.CheckOwner(ctx, c.id, t)
		if err == nil {
			fixes[i], err = a.PrepareAlter(ctx, c.id, t, drop)
		}
		if pgerror.Code(err) == pgerror.CodeInsufficientPrivilege {
			return refuse(kerr.GroupAuthorizationFailed, "dropping consumer %s of topic %s: %v", name, t, err)
		}
		if err != nil {
			return err
		}
	}
	for i, t := range topics {
		err := c.s.cfg.Store.AlterTopic(ctx, t, func(cfg *topicstore.TopicConfig) error {
			old := topicstore.CloneConfig(*cfg)
			if err := drop(cfg); err != nil {
				return err
			}
			fixes[i](&old, cfg)
			return nil
		})
		if err != nil && !errors.Is(err, topicstore.ErrConsumerNotFound) && !errors.Is(err, topicstore.ErrTopicNotFound) {
			// (A consumer or topic gone meanwhile is as good as dropped.)
			c.s.log.Warn("kafka: delete group stopped", "group", name, "dropped", topics[:i], "left", topics[i:], "err", err)
			return fmt.Errorf("group %s: consumer dropped from topics %v, not from %v: %w", name, topics[:i], topics[i:], err)
		}
	}
	return nil
}
