package kafka

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// sync handles a SyncGroup: the leader's assignments complete the
// rebalance and answer every waiting member; a follower waits for them
// (the channel), or, in a Stable group, gets its assignment at once.
func (co *coordinator) sync(name, id string, gen int32, protocolType, protocol *string, assignments []kmsg.SyncGroupRequestGroupAssignment) <-chan syncResult {
	out := make(chan syncResult, 1)
	co.mu.Lock()
	defer co.mu.Unlock()
	g, m, code := co.check(name, id, gen)
	if code == 0 && (protocolType != nil && *protocolType != g.protocolType || protocol != nil && *protocol != g.protocol) {
		code = kerr.InconsistentGroupProtocol.Code
	}
	if code != 0 {
		out <- syncResult{code: code}
		return out
	}
	switch g.state {
	case statePreparingRebalance:
		out <- syncResult{code: kerr.RebalanceInProgress.Code}
	case stateStable:
		out <- syncResult{assignment: m.assignment}
		co.touch(g, m)
	case stateCompletingRebalance:
		if m.sync != nil {
			m.sync <- syncResult{code: kerr.RebalanceInProgress.Code}
		}
		m.sync = out
		co.touch(g, m)
		if id != g.leader {
			return out
		}
		for _, a := range assignments {
			if am := g.members[a.MemberID]; am != nil {
				am.assignment = a.MemberAssignment
			}
		}
		g.state = stateStable
		co.save(g)
		for _, am := range g.members {
			if am.sync != nil {
				am.sync <- syncResult{assignment: am.assignment}
				am.sync = nil
			}
		}
	default:
		out <- syncResult{code: kerr.UnknownMemberID.Code}
	}
	return out
}

// heartbeat handles a Heartbeat: the member is alive (its session timer
// restarts); a rebalance in preparation is REBALANCE_IN_PROGRESS, so
// the member rejoins.
func (co *coordinator) heartbeat(name, id string, gen int32) int16 {
	co.mu.Lock()
	defer co.mu.Unlock()
	g, m, code := co.check(name, id, gen)
	if code != 0 {
		return code
	}
	if m.join == nil {
		co.touch(g, m)
	}
	if g.state == statePreparingRebalance {
		return kerr.RebalanceInProgress.Code
	}
	return 0
}

// leave removes member id (or the member of instance id, when id is "")
// of group name and rebalances the rest; the code is UNKNOWN_MEMBER_ID
// when there is no such member.
func (co *coordinator) leave(name, id, instanceID string) int16 {
	co.mu.Lock()
	defer co.mu.Unlock()
	g := co.groups[name]
	if g == nil {
		return kerr.UnknownMemberID.Code
	}
	if id == "" && instanceID != "" {
		for mid, m := range g.members {
			if m.instanceID == instanceID {
				id = mid
			}
		}
	}
	if g.members[id] == nil {
		return kerr.UnknownMemberID.Code
	}
	co.removeAndRebalance(g, id)
	return 0
}

// commitCheck decides whether member id of generation gen may commit
// offsets for group name: a simple commit (generation -1, no member id)
// when the group has no members here, else the member's own at the
// group's generation. As in Kafka, a rebalance in preparation still takes
// commits of the generation ending (eager clients commit what they
// revoke before they rejoin); one waiting for SyncGroup does not.
func (co *coordinator) commitCheck(name, id string, gen int32) int16 {
	co.mu.Lock()
	defer co.mu.Unlock()
	if co.deleting[name] > 0 {
		return kerr.CoordinatorLoadInProgress.Code // retried once the group is deleted
	}
	g := co.groups[name]
	if gen < 0 && id == "" {
		if g != nil && len(g.members) > 0 {
			return kerr.UnknownMemberID.Code
		}
		return 0
	}
	g, m, code := co.check(name, id, gen)
	if code != 0 {
		return code
	}
	if g.state == stateCompletingRebalance {
		return kerr.RebalanceInProgress.Code
	}
	if m.join == nil {
		co.touch(g, m)
	}
	return 0
}

// describe is group name as DescribeGroups shows it; a group this
// gateway does not coordinate members of is Dead, as Kafka shows an
// unknown group.
func (co *coordinator) describe(name string, withAssignments bool) kmsg.DescribeGroupsResponseGroup {
	co.mu.Lock()
	defer co.mu.Unlock()
	d := kmsg.NewDescribeGroupsResponseGroup()
	d.Group = name
	d.AuthorizedOperations = -2147483648
	g := co.groups[name]
	if g == nil {
		d.State = "Dead"
		return d
	}
	d.State, d.ProtocolType, d.Protocol = g.state, g.protocolType, g.protocol
	for _, id := range g.memberIDs() {
		m := g.members[id]
		dm := kmsg.NewDescribeGroupsResponseGroupMember()
		dm.MemberID, dm.ClientID, dm.ClientHost = id, m.clientID, m.clientHost
		if m.instanceID != "" {
			iid := m.instanceID
			dm.InstanceID = &iid
		}
		for _, p := range m.protocols {
			if p.Name == g.protocol {
				dm.ProtocolMetadata = p.Metadata
			}
		}
		if withAssignments {
			dm.MemberAssignment = m.assignment
		}
		d.Members = append(d.Members, dm)
	}
	return d
}

// list is every group this gateway coordinates, with its protocol type
// and state.
func (co *coordinator) list() []kmsg.ListGroupsResponseGroup {
	co.mu.Lock()
	defer co.mu.Unlock()
	var out []kmsg.ListGroupsResponseGroup
	for name, g := range co.groups {
		lg := kmsg.NewListGroupsResponseGroup()
		lg.Group, lg.ProtocolType, lg.GroupState = name, g.protocolType, g.state
		out = append(out, lg)
	}
	return out
}

// deleteBegin starts a DeleteGroups of group name unless it has members
// here (false: Kafka's NON_EMPTY_GROUP). Until deleteEnd no member joins
// and no offset is committed for it (COORDINATOR_LOAD_IN_PROGRESS, which
// clients retry), so that nothing lands in a consumer as it is dropped.
func (co *coordinator) deleteBegin(name string) bool {
	co.mu.Lock()
	defer co.mu.Unlock()
	if g := co.groups[name]; g != nil && len(g.members) > 0 {
		return false
	}
	co.deleting[name]++
	return true
}

// deleteEnd ends a DeleteGroups deleteBegin started.
func (co *coordinator) deleteEnd(name string) {
	co.mu.Lock()
	defer co.mu.Unlock()
	if co.deleting[name]--; co.deleting[name] <= 0 {
		delete(co.deleting, name)
	}
}

// subscribed describes group name's members here for OffsetDelete:
// whether it has any, and the topics they consume when they speak
// Kafka's consumer protocol (each member's subscription and assignment);
// known is false when members speak another protocol, whose topics the
// coordinator cannot read.
func (co *coordinator) subscribed(name string) (live bool, topics map[string]bool, known bool) {
	co.mu.Lock()
	defer co.mu.Unlock()
	g := co.groups[name]
	if g == nil || len(g.members) == 0 {
		return false, nil, true
	}
	if g.protocolType != "consumer" {
		return true, nil, false
	}
	topics = map[string]bool{}
	for _, m := range g.members {
		for _, p := range m.protocols {
			var md kmsg.ConsumerMemberMetadata
			if (g.protocol == "" || p.Name == g.protocol) && md.ReadFrom(p.Metadata) == nil {
				for _, t := range md.Topics {
					topics[t] = true
				}
			}
		}
		var a kmsg.ConsumerMemberAssignment
		if len(m.assignment) > 0 && a.ReadFrom(m.assignment) == nil {
			for _, t := range a.Topics {
				topics[t.Topic] = true
			}
		}
	}
	return true, topics, true
}
