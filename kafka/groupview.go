package kafka

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// GroupView is one group this gateway coordinates, as sys.kafka_groups
// shows it: a copy, taken under the coordinator's lock.
type GroupView struct {
	Group, State, ProtocolType, Protocol, Leader string
	Generation                                   int32
	Members                                      []MemberView
}

// MemberView is one member of a GroupView. Assignment is the member's
// partitions ("orders[0,2] refunds[1]") when the group speaks Kafka's
// consumer protocol, its size in bytes otherwise; Assigned is the same
// partitions by topic (nil for another protocol).
type MemberView struct {
	ID, InstanceID, ClientID, ClientHost, Assignment string
	Assigned                                         map[string][]int32
}

// Groups lists the groups this gateway coordinates, by name, their
// members by id: those it holds and, loaded first, those stored that it
// coordinates and does not hold (dropped from memory a moment ago, when
// its view of the gateways or a write's version disagreed, and not asked
// for since), so that the view does not depend on when a member last
// sent a request.
func (s *Server) Groups() []GroupView {
	ctx, cancel := context.WithTimeout(s.ctx, askTimeout)
	s.sweepGroupDocs(ctx)
	cancel()
	co := s.groups
	co.mu.Lock()
	defer co.mu.Unlock()
	out := make([]GroupView, 0, len(co.groups))
	for _, g := range co.groups {
		gv := GroupView{Group: g.name, State: g.state, ProtocolType: g.protocolType, Protocol: g.protocol,
			Leader: g.leader, Generation: g.generation}
		for _, id := range g.memberIDs() {
			m := g.members[id]
			text, assigned := readAssignment(g.protocolType, m.assignment)
			gv.Members = append(gv.Members, MemberView{ID: id, InstanceID: m.instanceID, ClientID: m.clientID,
				ClientHost: m.clientHost, Assignment: text, Assigned: assigned})
		}
		out = append(out, gv)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Group < out[j].Group })
	return out
}

// readAssignment reads a member's assignment: the consumer protocol's
// topics and partitions, as text and by topic, or for another protocol
// (or one that does not decode) its size.
func readAssignment(protocolType string, b []byte) (string, map[string][]int32) {
	if len(b) == 0 {
		return "", nil
	}
	var a kmsg.ConsumerMemberAssignment
	if protocolType != "consumer" || a.ReadFrom(b) != nil {
		return fmt.Sprintf("%d bytes", len(b)), nil
	}
	parts := make([]string, 0, len(a.Topics))
	byTopic := make(map[string][]int32, len(a.Topics))
	for _, t := range a.Topics {
		ps := make([]string, len(t.Partitions))
		for i, p := range t.Partitions {
			ps[i] = fmt.Sprint(p)
		}
		parts = append(parts, t.Topic+"["+strings.Join(ps, ",")+"]")
		byTopic[t.Topic] = append(byTopic[t.Topic], t.Partitions...)
	}
	sort.Strings(parts)
	return strings.Join(parts, " "), byTopic
}
