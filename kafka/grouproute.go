package kafka

import (
	"context"
	"encoding/json"
	"hash/fnv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"topicgate/topicstore"
)

// Groups across gateways. On a cluster (a store that is a
// topicstore.Gatherer) each group has one coordinating gateway among
// those with a Kafka door: the one whose id ranks highest for the group
// (rendezvous hashing), so every gateway names the same one from the same
// view without storing anything. A member talks to whichever gateway it
// reached (every gateway is broker 0 to its clients); that gateway runs
// the member's requests on the group's coordinator, its own or, through
// the store's Ask, the other gateway's. Offsets are in the store either
// way. When the coordinating gateway goes, the others stop naming it
// once it no longer answers, and the members rejoin on the next one, as
// Kafka members do when their coordinator moves.

const (
	kindDoor   = "kafka.door"   // Gather: the gateways with a Kafka door
	kindGroup  = "kafka.group"  // Ask: one group operation on its coordinator
	kindGroups = "kafka.groups" // Gather: each gateway's groups (ListGroups)
)

// askTimeout bounds an operation asked of another gateway, beyond the
// rebalance a join or sync waits for (maxRebalanceWait when a sync does
// not say: Kafka's default rebalance timeout).
const (
	askTimeout       = 10 * time.Second
	maxRebalanceWait = 5 * time.Minute
)

// doorViewTTL is how long a gateway reuses the gateways it gathered
// before gathering them again.
const doorViewTTL = time.Second

// router finds each group's coordinator and runs operations on it.
type router struct {
	s *Server
	g topicstore.Gatherer // nil: one process, every group here

	mu   sync.Mutex
	self string
	view []string
	at   time.Time
	// views counts the views that differed from the one before: a group
	// held since an older view is checked against the store (groupstore.go).
	views uint64
}

// start makes this gateway answer the others (when on a cluster).
func (r *router) start() error {
	if r.g == nil {
		return nil
	}
	if err := r.g.Serve(kindDoor, func() []byte { return []byte{1} }); err != nil {
		return err
	}
	if err := r.g.Serve(kindGroups, func() []byte {
		b, _ := json.Marshal(r.s.groups.list())
		return b
	}); err != nil {
		return err
	}
	return r.g.Answer(kindGroup, r.answer)
}

// gateways returns this gateway's id and the gateways with a Kafka door,
// gathered at most doorViewTTL ago.
func (r *router) gateways(ctx context.Context) (string, []string) {
	r.mu.Lock()
	if r.self != "" && time.Since(r.at) < doorViewTTL {
		defer r.mu.Unlock()
		return r.self, r.view
	}
	got, err := r.g.Gather(ctx, kindDoor)
	if err != nil || len(got.Answers) == 0 {
		defer r.mu.Unlock()
		return r.self, r.view // the last view, if any
	}
	var view []string
	for _, a := range got.Answers {
		view = append(view, a.Gateway)
	}
	changed := !sameSet(view, r.view)
	if changed {
		r.views++
	}
	r.self, r.view, r.at = got.Answers[0].Gateway, view, time.Now()
	self := r.self
	r.mu.Unlock()
	if changed {
		// Groups this gateway no longer coordinates leave its memory
		// (their members go to the new coordinator, which loads them).
		r.s.groups.unloadWhere(func(group string) bool {
			_, local := pick(group, view, self)
			return !local
		})
	}
	return self, view
}

// sameSet reports whether a and b hold the same gateways.
func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	in := make(map[string]bool, len(a))
	for _, x := range a {
		in[x] = true
	}
	for _, x := range b {
		if !in[x] {
			return false
		}
	}
	return true
}

// epoch is the number of the view of the gateways in force (0 when not
// on a cluster).
func (r *router) epoch() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.views
}

// ownsNow reports whether this gateway coordinates group by a view at
// most doorViewTTL old (what a group's timers ask before they change it).
func (r *router) ownsNow(group string) bool {
	ctx, cancel := context.WithTimeout(r.s.ctx, askTimeout)
	defer cancel()
	_, local := r.owner(ctx, group)
	return local
}

// owner is the gateway coordinating group ("" with local true: this one).
func (r *router) owner(ctx context.Context, group string) (gw string, local bool) {
	if r.g == nil {
		return "", true
	}
	self, view := r.gateways(ctx)
	return pick(group, view, self)
}

// pick is rendezvous hashing of group over view; a view without this
// gateway's id (not gathered yet) leaves the group here.
func pick(group string, view []string, self string) (string, bool) {
	best, owner := uint64(0), ""
	for _, gw := range view {
		h := fnv.New64a()
		_, _ = h.Write([]byte(group))
		_, _ = h.Write([]byte{0})
		_, _ = h.Write([]byte(gw))
		if v := h.Sum64(); owner == "" || v > best || (v == best && gw > owner) {
			best, owner = v, gw
		}
	}
	if owner == "" || owner == self {
		return owner, true
	}
	return owner, false
}

// groupCall is one coordinator operation as Ask carries it.
type groupCall struct {
	Op                      string
	Group, Member, Instance string
	Gen                     int32
	// join
	ClientID, ClientHost, ProtocolType string
	Protocols                          []kmsg.JoinGroupRequestProtocol
	Session, Rebalance                 time.Duration
	RequireKnownID                     bool
	// sync
	SyncProtocolType, SyncProtocol *string
	Assignments                    []kmsg.SyncGroupRequestGroupAssignment
}

// groupReply is its answer.
type groupReply struct {
	Code       int16
	Generation int32
	Protocol   string
	Leader     string
	MemberID   string
	Members    []kmsg.JoinGroupResponseMember
	Assignment []byte
	Describe   *kmsg.DescribeGroupsResponseGroup
	Live       bool
	Known      bool
	Topics     map[string]bool
}

// call runs c on the group's coordinator: here, or asked of its gateway.
// A coordinator that cannot be reached is NOT_COORDINATOR: the member
// finds its coordinator again and retries.
func (r *router) call(ctx context.Context, c *groupCall) groupReply {
	gw, local := r.owner(ctx, c.Group)
	if local {
		return r.run(ctx, c)
	}
	req, err := json.Marshal(c)
	if err != nil {
		return groupReply{Code: kerr.UnknownServerError.Code}
	}
	// A join or sync waits for the rebalance (at most the members'
	// rebalance timeout); the rest answer at once.
	wait := askTimeout
	if c.Op == "join" || c.Op == "sync" {
		wait += max(c.Rebalance, maxRebalanceWait)
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	b, err := r.g.Ask(ctx, gw, kindGroup, req)
	var rep groupReply
	if err == nil {
		err = json.Unmarshal(b, &rep)
	}
	if err != nil {
		r.s.log.Info("kafka: group coordinator not reached", "group", c.Group, "gateway", gw, "err", err)
		r.forget()
		return groupReply{Code: kerr.NotCoordinator.Code, Generation: -1, MemberID: c.Member}
	}
	return rep
}

// forget drops the cached view (a gateway in it did not answer).
func (r *router) forget() {
	r.mu.Lock()
	r.at = time.Time{}
	r.mu.Unlock()
}

// answer runs an operation another gateway asked this one to, if this
// gateway coordinates the group by its own view too.
func (r *router) answer(ctx context.Context, data []byte) []byte {
	var c groupCall
	rep := groupReply{Code: kerr.NotCoordinator.Code, Generation: -1}
	if err := json.Unmarshal(data, &c); err == nil {
		rep.MemberID = c.Member
		if _, local := r.owner(ctx, c.Group); local {
			rep = r.run(ctx, &c)
		}
	}
	b, _ := json.Marshal(rep)
	return b
}

// run runs c on this gateway's coordinator.
func (r *router) run(ctx context.Context, c *groupCall) groupReply {
	co := r.s.groups
	if c.Op != "deleteEnd" && !co.load(ctx, c.Group, r.epoch()) {
		return groupReply{Code: kerr.CoordinatorLoadInProgress.Code, Generation: -1, MemberID: c.Member}
	}
	switch c.Op {
	case "join":
		jr := &joinRequest{group: c.Group, memberID: c.Member, instanceID: c.Instance, clientID: c.ClientID,
			clientHost: c.ClientHost, protocolType: c.ProtocolType, protocols: c.Protocols, session: c.Session,
			rebalance: c.Rebalance, requireKnownID: c.RequireKnownID}
		select {
		case res := <-co.join(jr):
			return groupReply{Code: res.code, Generation: res.generation, Protocol: res.protocol, Leader: res.leader,
				MemberID: res.memberID, Members: res.members}
		case <-ctx.Done():
			return groupReply{Code: kerr.CoordinatorNotAvailable.Code, Generation: -1, MemberID: c.Member}
		}
	case "sync":
		select {
		case res := <-co.sync(c.Group, c.Member, c.Gen, c.SyncProtocolType, c.SyncProtocol, c.Assignments):
			return groupReply{Code: res.code, Assignment: res.assignment}
		case <-ctx.Done():
			return groupReply{Code: kerr.CoordinatorNotAvailable.Code}
		}
	case "heartbeat":
		return groupReply{Code: co.heartbeat(c.Group, c.Member, c.Gen)}
	case "leave":
		return groupReply{Code: co.leave(c.Group, c.Member, c.Instance)}
	case "commitCheck":
		return groupReply{Code: co.commitCheck(c.Group, c.Member, c.Gen)}
	case "describe":
		d := co.describe(c.Group, true)
		return groupReply{Describe: &d}
	case "deleteBegin":
		return groupReply{Live: !co.deleteBegin(c.Group)}
	case "deleteEnd":
		co.deleteEnd(c.Group)
		return groupReply{}
	case "subscribed":
		live, topics, known := co.subscribed(c.Group)
		return groupReply{Live: live, Topics: topics, Known: known}
	}
	return groupReply{Code: kerr.InvalidRequest.Code}
}

// listAll is every gateway's groups (ListGroups): this one's alone when
// not on a cluster.
func (r *router) listAll(ctx context.Context) []kmsg.ListGroupsResponseGroup {
	if r.g == nil {
		return r.s.groups.list()
	}
	got, err := r.g.Gather(ctx, kindGroups)
	if err != nil {
		return r.s.groups.list()
	}
	var out []kmsg.ListGroupsResponseGroup
	seen := map[string]bool{}
	for _, a := range got.Answers {
		var gs []kmsg.ListGroupsResponseGroup
		if json.Unmarshal(a.Data, &gs) != nil {
			continue
		}
		for _, g := range gs {
			if !seen[g.Group] {
				seen[g.Group] = true
				out = append(out, g)
			}
		}
	}
	return out
}
