package kafka

import (
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"topicgate/topicstore"
)

// Consumer groups, the classic protocol. A group's membership (members,
// generation, leader, the protocol chosen, the assignments) lives in its
// coordinator's memory and, from each completed rebalance on, in a
// document of the store (groupstore.go), from which a restarted or new
// coordinator loads it. Offsets are the group's consumer positions in
// the store (offsets.go).

// Group states, as Kafka names them in DescribeGroups and ListGroups.
const (
	stateEmpty               = "Empty"
	statePreparingRebalance  = "PreparingRebalance"
	stateCompletingRebalance = "CompletingRebalance"
	stateStable              = "Stable"
)

// pendingTimeout bounds how long a member id handed out with
// MEMBER_ID_REQUIRED waits for its member's JoinGroup when the request
// named no usable session timeout.
const pendingTimeout = 30 * time.Second

// joinResult is what a waiting JoinGroup is answered with.
type joinResult struct {
	code       int16
	generation int32
	protocol   string
	leader     string
	memberID   string
	members    []kmsg.JoinGroupResponseMember // the leader's only
}

// syncResult is what a waiting SyncGroup is answered with.
type syncResult struct {
	code       int16
	assignment []byte
}

// member is one member of a group.
type member struct {
	id, instanceID       string
	clientID, clientHost string
	protocolType         string
	protocols            []kmsg.JoinGroupRequestProtocol
	session, rebalance   time.Duration
	assignment           []byte
	// join and sync, when set, are the member's waiting JoinGroup and
	// SyncGroup (buffered: the coordinator never blocks on them).
	join chan joinResult
	sync chan syncResult
	// timer expires the member after its session timeout without a
	// heartbeat; it is stopped while its JoinGroup waits (the rebalance
	// timer bounds that). beat counts the restarts: a timer that fired
	// as it was being replaced sees a newer beat and does nothing.
	timer *time.Timer
	beat  uint64
}

// group is one group's membership; every field is guarded by the
// coordinator's mutex.
type group struct {
	name         string
	state        string
	generation   int32
	protocolType string
	protocol     string
	leader       string
	members      map[string]*member
	// pending are member ids handed out with MEMBER_ID_REQUIRED (KIP-394)
	// whose members have not joined yet, each with its expiry.
	pending map[string]*time.Timer
	// rebalanceTimer ends a rebalance that waits for members that do not
	// rejoin: they are removed and the rest go on. rebalances counts the
	// rebalances, so that a timer of an earlier one does nothing.
	rebalanceTimer *time.Timer
	rebalances     uint64
	// epoch is the router's view of the gateways (router.epoch) the
	// group was last loaded or checked against the store at.
	epoch uint64
}

// coordinator holds the groups this gateway coordinates.
type coordinator struct {
	mu     sync.Mutex
	groups map[string]*group
	// deleting counts the DeleteGroups under way per group name: no member
	// joins and nothing commits meanwhile (deleteBegin).
	deleting map[string]int
	// afterFunc is time.AfterFunc (tests could inject a clock here).
	afterFunc func(time.Duration, func()) *time.Timer
	// keep writes the groups to the store and remembers their versions
	// (groupstore.go); epoch is the last view a request came with.
	keep  *keeper
	epoch uint64
	// owns reports whether this gateway still coordinates a group (nil:
	// always); a timer asks it before it changes a group.
	owns func(group string) bool
	log  *slog.Logger
}

func newCoordinator(docs topicstore.Documents, log *slog.Logger) *coordinator {
	return &coordinator{groups: map[string]*group{}, deleting: map[string]int{}, afterFunc: time.AfterFunc,
		keep: newKeeper(docs), log: log}
}

// newMemberID is a member id as Kafka makes them: the client id and a
// random suffix.
func newMemberID(clientID string) string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return clientID + "-" + hex.EncodeToString(b[:])
}

// get returns the group named name, creating it Empty when create is set
// (nil otherwise when there is none).
func (co *coordinator) get(name string, create bool) *group {
	g := co.groups[name]
	if g == nil && create {
		g = &group{name: name, state: stateEmpty, members: map[string]*member{}, pending: map[string]*time.Timer{}, epoch: co.epoch}
		co.groups[name] = g
	}
	return g
}

// forget drops an Empty group with no pending member ids: its offsets
// are in the store, nothing else of it needs keeping.
func (co *coordinator) forget(g *group) {
	if g.state == stateEmpty && len(g.members) == 0 && len(g.pending) == 0 {
		delete(co.groups, g.name)
	}
}

// joinRequest is a JoinGroup's fields the coordinator uses.
type joinRequest struct {
	group, memberID, instanceID string
	clientID, clientHost        string
	protocolType                string
	protocols                   []kmsg.JoinGroupRequestProtocol
	session, rebalance          time.Duration
	requireKnownID              bool // v4+: a new member first gets MEMBER_ID_REQUIRED
}

// join adds or updates a member and starts (or joins) a rebalance. It
// returns the channel the answer comes on; an immediate answer (an
// error, MEMBER_ID_REQUIRED) is already in it.
func (co *coordinator) join(r *joinRequest) <-chan joinResult {
	out := make(chan joinResult, 1)
	co.mu.Lock()
	defer co.mu.Unlock()
	g := co.get(r.group, true)
	fail := func(code int16) <-chan joinResult {
		out <- joinResult{code: code, generation: -1, memberID: r.memberID}
		co.forget(g)
		return out
	}
	if co.deleting[r.group] > 0 {
		// DeleteGroups is dropping the group's consumers: the member
		// retries (a retriable code) and joins the group's next life.
		return fail(kerr.CoordinatorLoadInProgress.Code)
	}
	if r.protocolType == "" || len(r.protocols) == 0 || !g.compatible(r) {
		return fail(kerr.InconsistentGroupProtocol.Code)
	}
	m := g.members[r.memberID]
	switch {
	case r.memberID == "" && r.requireKnownID:
		id := newMemberID(r.clientID)
		timeout := r.session
		if timeout <= 0 {
			timeout = pendingTimeout
		}
		g.pending[id] = co.afterFunc(timeout, func() { co.expirePending(r.group, id) })
		out <- joinResult{code: kerr.MemberIDRequired.Code, generation: -1, memberID: id}
		return out
	case r.memberID == "":
		r.memberID = newMemberID(r.clientID)
	case m == nil && g.pending[r.memberID] != nil:
		g.pending[r.memberID].Stop()
		delete(g.pending, r.memberID)
	case m == nil:
		return fail(kerr.UnknownMemberID.Code)
	}
	if r.instanceID != "" {
		// A static member that comes back under a new member id replaces
		// its old self (Kafka fences it the same way).
		for id, old := range g.members {
			if id != r.memberID && old.instanceID == r.instanceID {
				g.remove(id)
			}
		}
	}
	if m == nil {
		m = &member{id: r.memberID}
		g.members[m.id] = m
	}
	m.instanceID, m.clientID, m.clientHost = r.instanceID, r.clientID, r.clientHost
	m.protocolType, m.protocols = r.protocolType, r.protocols
	m.session, m.rebalance = r.session, r.rebalance
	if m.join != nil {
		// A member that sends JoinGroup again while waiting: the old
		// request is answered as Kafka does, with the error a retry fixes.
		m.join <- joinResult{code: kerr.RebalanceInProgress.Code, generation: -1, memberID: m.id}
	}
	m.join = out
	if m.timer != nil {
		m.timer.Stop()
	}
	g.protocolType = r.protocolType
	co.prepareRebalance(g)
	co.tryCompleteJoin(g)
	return out
}

// compatible reports whether r's protocol type and protocols fit the
// group: the same protocol type, and some protocol every other member
// supports too.
func (g *group) compatible(r *joinRequest) bool {
	others := 0
	for id, m := range g.members {
		if id == r.memberID {
			continue
		}
		others++
		if m.protocolType != r.protocolType {
			return false
		}
	}
	if others == 0 {
		return true
	}
	for _, p := range r.protocols {
		if g.supportedByAll(p.Name, r.memberID) {
			return true
		}
	}
	return false
}

// supportedByAll reports whether every member but except names protocol.
func (g *group) supportedByAll(protocol, except string) bool {
	for id, m := range g.members {
		if id == except {
			continue
		}
		found := false
		for _, p := range m.protocols {
			found = found || p.Name == protocol
		}
		if !found {
			return false
		}
	}
	return true
}

// prepareRebalance moves g to PreparingRebalance (once per rebalance):
// waiting SyncGroups are told REBALANCE_IN_PROGRESS and the rebalance
// timer (the longest rebalance timeout of the members) starts.
func (co *coordinator) prepareRebalance(g *group) {
	if g.state == statePreparingRebalance {
		return
	}
	g.state = statePreparingRebalance
	var longest time.Duration
	for _, m := range g.members {
		if m.sync != nil {
			m.sync <- syncResult{code: kerr.RebalanceInProgress.Code}
			m.sync = nil
		}
		longest = max(longest, m.rebalance)
	}
	if g.rebalanceTimer != nil {
		g.rebalanceTimer.Stop()
	}
	g.rebalances++
	n := g.rebalances
	g.rebalanceTimer = co.afterFunc(longest, func() { co.rebalanceExpired(g, n) })
}

// rebalanceExpired ends rebalance n of g whose members did not all
// rejoin in time: those that did not are removed, and the rest go on.
func (co *coordinator) rebalanceExpired(g *group, n uint64) {
	if !co.stillOwns(g.name) {
		return
	}
	co.mu.Lock()
	defer co.mu.Unlock()
	if co.groups[g.name] != g || g.state != statePreparingRebalance || g.rebalances != n {
		return
	}
	for id, m := range g.members {
		if m.join == nil {
			g.remove(id)
		}
	}
	co.tryCompleteJoin(g)
}

// tryCompleteJoin completes a rebalance once every member has a waiting
// JoinGroup: a new generation, the protocol every member supports (the
// first of the leader's that all do), and the answers, the leader's with
// every member's metadata.
func (co *coordinator) tryCompleteJoin(g *group) {
	if g.state != statePreparingRebalance {
		return
	}
	if len(g.members) == 0 {
		co.empty(g)
		return
	}
	for _, m := range g.members {
		if m.join == nil {
			return
		}
	}
	if g.rebalanceTimer != nil {
		g.rebalanceTimer.Stop()
		g.rebalanceTimer = nil
	}
	ids := g.memberIDs()
	if g.members[g.leader] == nil {
		g.leader = ids[0]
	}
	g.protocol = ""
	for _, p := range g.members[g.leader].protocols {
		if g.supportedByAll(p.Name, "") {
			g.protocol = p.Name
			break
		}
	}
	g.generation++
	g.state = stateCompletingRebalance
	var members []kmsg.JoinGroupResponseMember
	for _, id := range ids {
		m := g.members[id]
		jm := kmsg.NewJoinGroupResponseMember()
		jm.MemberID = id
		if m.instanceID != "" {
			iid := m.instanceID
			jm.InstanceID = &iid
		}
		for _, p := range m.protocols {
			if p.Name == g.protocol {
				jm.ProtocolMetadata = p.Metadata
			}
		}
		members = append(members, jm)
	}
	for _, id := range ids {
		m := g.members[id]
		res := joinResult{generation: g.generation, protocol: g.protocol, leader: g.leader, memberID: id}
		if id == g.leader {
			res.members = members
		}
		m.join <- res
		m.join = nil
		m.assignment = nil
		co.touch(g, m)
	}
}

// empty makes g Empty: no members, no rebalance.
func (co *coordinator) empty(g *group) {
	co.saveEmpty(g)
	g.state = stateEmpty
	g.protocol, g.leader = "", ""
	if g.rebalanceTimer != nil {
		g.rebalanceTimer.Stop()
		g.rebalanceTimer = nil
	}
	co.forget(g)
}

// memberIDs are g's member ids, sorted (answers in a stable order).
func (g *group) memberIDs() []string {
	ids := make([]string, 0, len(g.members))
	for id := range g.members {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// touch restarts m's session timer: m is alive.
func (co *coordinator) touch(g *group, m *member) {
	if m.timer != nil {
		m.timer.Stop()
	}
	m.beat++
	name, id, beat := g.name, m.id, m.beat
	m.timer = co.afterFunc(m.session, func() { co.expireMember(name, id, m, beat) })
}

// expireMember removes a member whose session timed out without a
// heartbeat (beat is the restart its timer was set at) and rebalances
// the rest.
func (co *coordinator) expireMember(name, id string, m *member, beat uint64) {
	if !co.stillOwns(name) {
		return
	}
	co.mu.Lock()
	defer co.mu.Unlock()
	g := co.groups[name]
	if g == nil || g.members[id] != m || m.join != nil || m.beat != beat {
		return
	}
	co.removeAndRebalance(g, id)
}

// stillOwns reports whether this gateway still coordinates group name;
// when it does not, the group leaves memory unchanged in the store (its
// members went to the new coordinator, which loads it).
func (co *coordinator) stillOwns(name string) bool {
	if co.owns == nil || co.owns(name) {
		return true
	}
	co.mu.Lock()
	defer co.mu.Unlock()
	if g := co.groups[name]; g != nil {
		co.unload(g)
	}
	return false
}

// expirePending forgets a member id handed out with MEMBER_ID_REQUIRED
// that never joined.
func (co *coordinator) expirePending(name, id string) {
	co.mu.Lock()
	defer co.mu.Unlock()
	if g := co.groups[name]; g != nil {
		delete(g.pending, id)
		co.forget(g)
	}
}

// remove takes member id out of g, answering its waiting requests.
func (g *group) remove(id string) {
	m := g.members[id]
	if m == nil {
		return
	}
	if m.timer != nil {
		m.timer.Stop()
	}
	if m.join != nil {
		m.join <- joinResult{code: kerr.UnknownMemberID.Code, generation: -1, memberID: id}
	}
	if m.sync != nil {
		m.sync <- syncResult{code: kerr.UnknownMemberID.Code}
	}
	delete(g.members, id)
	if g.leader == id {
		g.leader = ""
	}
}

// removeAndRebalance removes member id and rebalances what is left (or
// leaves the group Empty).
func (co *coordinator) removeAndRebalance(g *group, id string) {
	g.remove(id)
	if len(g.members) == 0 {
		co.empty(g)
		return
	}
	co.prepareRebalance(g)
	co.tryCompleteJoin(g)
}

// check finds member id of group name at generation gen: UNKNOWN_MEMBER_ID
// when there is no such member, ILLEGAL_GENERATION when gen is not the
// group's.
func (co *coordinator) check(name, id string, gen int32) (*group, *member, int16) {
	g := co.groups[name]
	if g == nil || g.members[id] == nil {
		return g, nil, kerr.UnknownMemberID.Code
	}
	if gen != g.generation {
		return g, g.members[id], kerr.IllegalGeneration.Code
	}
	return g, g.members[id], 0
}
