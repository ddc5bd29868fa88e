package kafka

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"topicgate/topicstore"
)

// Group membership in the store. A group's coordinator writes the group
// to a document of the store (topicstore.Documents, key groupDocKey) each
// time a rebalance completes (the leader's SyncGroup: generation,
// protocol, leader, members and their assignments) and deletes it when
// the group becomes Empty, as Kafka writes a group's metadata to
// __consumer_offsets. A coordinator that does not hold a group in memory
// (it restarted, or took the group over from a gateway that went) loads
// it at the group's first request, so members go on with their member
// ids, generation and assignments instead of rejoining; each loaded
// member has its session timeout to send its next heartbeat, and one
// that does not (it went with the old coordinator) is removed as any
// member whose session expires.
//
// Writes are in the background, one group at a time, the newest state of
// each group only (a rebalance answers its members without waiting for
// the store): a coordinator lost within a write's moment leaves the
// previous generation stored, whose members rejoin once, as they all
// did before membership was stored. Each write is conditional on the
// version this coordinator read or wrote last, so two coordinators of
// one group (their views of the gateways differed for a moment) cannot
// overwrite each other: the one refused drops the group from memory and
// its members' next requests load the stored one. A coordinator also
// re-reads the version of a group it holds when its view of the gateways
// changed, and drops a group whose stored version moved on meanwhile.
// A coordinator that cannot read a group it does not hold answers
// COORDINATOR_LOAD_IN_PROGRESS (load); a write that fails is retried, and
// only a stored version other than the one expected, written by another
// coordinator, counts as a conflict (adopt); a group too large for a
// document lives in memory only, its older document deleted.
// Bounds: one document per group with members; a document whose members
// all went with their coordinator is loaded by the sweep
// (sweepGroupDocs) on the group's coordinator, whose session timers
// then empty the group and delete it.

// groupDocPrefix starts the keys of groups' documents.
const groupDocPrefix = "kafka/group/"

// groupDocKey is group name's document key.
func groupDocKey(name string) string { return groupDocPrefix + name }

// groupDoc is a group's stored membership.
type groupDoc struct {
	// Writer is the coordinator (keeper.self) that wrote it.
	Writer       string      `json:"w"`
	Generation   int32       `json:"g"`
	ProtocolType string      `json:"pt"`
	Protocol     string      `json:"p"`
	Leader       string      `json:"l"`
	Members      []memberDoc `json:"m"`
}

// memberDoc is one member as stored.
type memberDoc struct {
	ID           string                          `json:"id"`
	Instance     string                          `json:"i,omitempty"`
	ClientID     string                          `json:"c"`
	ClientHost   string                          `json:"h"`
	ProtocolType string                          `json:"pt"`
	Protocols    []kmsg.JoinGroupRequestProtocol `json:"ps"`
	SessionMs    int64                           `json:"s"`
	RebalanceMs  int64                           `json:"r"`
	Assignment   []byte                          `json:"a"`
}

// snapshot is g as stored (under the coordinator's mutex).
func (g *group) snapshot() *groupDoc {
	d := &groupDoc{Generation: g.generation, ProtocolType: g.protocolType, Protocol: g.protocol, Leader: g.leader}
	for _, id := range g.memberIDs() {
		m := g.members[id]
		d.Members = append(d.Members, memberDoc{ID: id, Instance: m.instanceID, ClientID: m.clientID, ClientHost: m.clientHost,
			ProtocolType: m.protocolType, Protocols: m.protocols, SessionMs: m.session.Milliseconds(),
			RebalanceMs: m.rebalance.Milliseconds(), Assignment: m.assignment})
	}
	return d
}

// restore is the group d stores, Stable with its members (their timers
// are the caller's to start).
func restore(name string, d *groupDoc) *group {
	g := &group{name: name, state: stateStable, generation: d.Generation, protocolType: d.ProtocolType,
		protocol: d.Protocol, leader: d.Leader, members: map[string]*member{}, pending: map[string]*time.Timer{}}
	for _, md := range d.Members {
		g.members[md.ID] = &member{id: md.ID, instanceID: md.Instance, clientID: md.ClientID, clientHost: md.ClientHost,
			protocolType: md.ProtocolType, protocols: md.Protocols, session: time.Duration(md.SessionMs) * time.Millisecond,
			rebalance: time.Duration(md.RebalanceMs) * time.Millisecond, assignment: md.Assignment}
	}
	return g
}

// keeper writes the groups' documents and remembers their versions.
type keeper struct {
	docs topicstore.Documents // nil: membership is kept in memory only
	self string               // this coordinator's id, each document's Writer

	// versions are the versions of the documents this coordinator read
	// or wrote last (absent: none stored); dirty the newest state of each
	// group not written yet (nil: delete), busy the groups being written
	// (true: a deletion).
	// Guarded by the coordinator's mutex.
	versions map[string]uint64
	dirty    map[string]*groupDoc
	busy     map[string]bool
	wake     chan struct{}
	// loading counts the loads reading each group's document, and wrote
	// the writes of that group completed meanwhile (an entry lives while
	// a load of its group does); absent holds the groups found with no
	// stored members, each at the view it was read at (so a group only
	// ever committed to, generation -1, is not read at each request;
	// at most maxAbsent, then forgotten all at once).
	loading map[string]int
	wrote   map[string]uint64
	absent  map[string]uint64
}

// maxAbsent bounds keeper.absent.
const maxAbsent = 4096

// writing reports whether group name is being written.
func (k *keeper) writing(name string) bool {
	_, ok := k.busy[name]
	return ok
}

func newKeeper(docs topicstore.Documents) *keeper {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return &keeper{docs: docs, self: hex.EncodeToString(b[:]), versions: map[string]uint64{},
		dirty: map[string]*groupDoc{}, busy: map[string]bool{}, wake: make(chan struct{}, 1),
		loading: map[string]int{}, wrote: map[string]uint64{}, absent: map[string]uint64{}}
}

// save queues g's state to be written (under the coordinator's mutex).
func (co *coordinator) save(g *group) {
	co.queueDoc(g.name, g.snapshot())
}

// saveEmpty queues the deletion of g's document (under the coordinator's
// mutex): g is Empty.
func (co *coordinator) saveEmpty(g *group) {
	k := co.keep
	if k.docs == nil {
		return
	}
	if _, stored := k.versions[g.name]; !stored && !k.writing(g.name) {
		delete(k.dirty, g.name) // nothing stored, nothing being stored
		return
	}
	co.queueDoc(g.name, nil)
}

func (co *coordinator) queueDoc(name string, d *groupDoc) {
	k := co.keep
	if k.docs == nil {
		return
	}
	k.dirty[name] = d
	select {
	case k.wake <- struct{}{}:
	default:
	}
}

// writeLoop writes the queued documents until done closes, then what is
// left (a rebalance that completed just before a graceful stop is
// stored, so the members go on after the restart).
func (co *coordinator) writeLoop(done <-chan struct{}) {
	for {
		for co.writeOne(false) {
		}
		select {
		case <-co.keep.wake:
		case <-done:
			for co.writeOne(true) {
			}
			return
		}
	}
}

// retryWrite is how long a group whose write failed (the store did not
// answer) waits before it is written again.
const retryWrite = time.Second

// writeOne writes one queued document (within askTimeout); false when
// none is queued. A write that fails is queued again after retryWrite,
// unless stopping.
func (co *coordinator) writeOne(stopping bool) bool {
	k := co.keep
	co.mu.Lock()
	var name string
	var d *groupDoc
	found := false
	for n, doc := range k.dirty {
		if !k.writing(n) {
			name, d, found = n, doc, true
			break
		}
	}
	if !found {
		co.mu.Unlock()
		return false
	}
	delete(k.dirty, name)
	k.busy[name] = d == nil
	expect := k.versions[name]
	held := co.groups[name]
	co.mu.Unlock()

	ctx, cancel := context.WithTimeout(context.Background(), askTimeout)
	defer cancel()
	var body []byte
	if d != nil {
		d.Writer = k.self
		body, _ = json.Marshal(d)
		if len(body) > topicstore.MaxDocumentBytes {
			// Too large to store (hundreds of members with long
			// subscriptions): the group is kept in memory only, and the
			// stored one, now older, is deleted, so a coordinator that
			// takes the group over starts it anew (its members rejoin).
			co.log.Warn("kafka: a group's membership is too large to store; kept in memory only",
				"group", name, "bytes", len(body), "limit", topicstore.MaxDocumentBytes)
			d, body = nil, nil
		}
	}
	var v uint64
	var err error
	if d != nil || expect != 0 {
		v, err = k.docs.SetDocument(ctx, groupDocKey(name), expect, body)
	}
	if err != nil && !errors.Is(err, topicstore.ErrDocumentConflict) {
		// Not stored, or not known to be: what the store holds says.
		err = co.adopt(ctx, name, expect, err)
	}

	co.mu.Lock()
	defer co.mu.Unlock()
	delete(k.busy, name)
	if k.loading[name] > 0 {
		k.wrote[name]++
	}
	switch {
	case err == nil:
		if v == 0 {
			delete(k.versions, name)
		} else {
			k.versions[name] = v
			delete(k.absent, name)
		}
	case errors.Is(err, topicstore.ErrDocumentConflict):
		// Another coordinator wrote the group: this one's is stale.
		co.log.Info("kafka: group taken over by another coordinator", "group", name)
		if g := co.groups[name]; g != nil {
			co.unload(g)
		}
		delete(k.dirty, name)
		delete(k.versions, name)
	default:
		co.log.Warn("kafka: writing a group's membership to the store", "group", name, "err", err)
		if _, newer := k.dirty[name]; !newer && !stopping {
			co.afterFunc(retryWrite, func() {
				co.mu.Lock()
				defer co.mu.Unlock()
				if _, newer := k.dirty[name]; !newer && co.current(name, held, d == nil) {
					co.queueDoc(name, d)
				}
			})
		}
	}
	return true
}

// current reports whether a failed write of group name, made while held
// was in memory, is still worth trying again (under the coordinator's
// mutex): the same group is held, or, for a deletion, none with members.
func (co *coordinator) current(name string, held *group, deletion bool) bool {
	g := co.groups[name]
	if deletion {
		return g == nil || len(g.members) == 0
	}
	return g != nil && g == held
}

// adopt decides after a write of group name, expected at version expect,
// that failed with cause: the version expected (the write was not
// stored), a document this coordinator wrote (its write, or an earlier
// one, stored) or none is this coordinator's to go on from, with its
// version (cause stands, so the write is tried again); another
// coordinator's newer one is a conflict.
func (co *coordinator) adopt(ctx context.Context, name string, expect uint64, cause error) error {
	body, v, err := co.keep.docs.Document(ctx, groupDocKey(name))
	if err != nil {
		return cause
	}
	var d groupDoc
	if v != expect && body != nil && (json.Unmarshal(body, &d) != nil || d.Writer != co.keep.self) {
		return topicstore.ErrDocumentConflict
	}
	co.mu.Lock()
	if v == 0 {
		delete(co.keep.versions, name)
	} else {
		co.keep.versions[name] = v
	}
	co.mu.Unlock()
	return cause
}

// unload drops g from memory without writing anything (under the
// coordinator's mutex): another coordinator holds it. Its waiting
// members are told NOT_COORDINATOR, so they find their coordinator
// again; the next request for it loads the stored group.
func (co *coordinator) unload(g *group) {
	for _, m := range g.members {
		if m.timer != nil {
			m.timer.Stop()
		}
		if m.join != nil {
			m.join <- joinResult{code: kerr.NotCoordinator.Code, generation: -1, memberID: m.id}
		}
		if m.sync != nil {
			m.sync <- syncResult{code: kerr.NotCoordinator.Code}
		}
	}
	for _, t := range g.pending {
		t.Stop()
	}
	if g.rebalanceTimer != nil {
		g.rebalanceTimer.Stop()
	}
	delete(co.groups, g.name)
	delete(co.keep.dirty, g.name) // not this gateway's to write any more
	delete(co.keep.versions, g.name)
	delete(co.keep.absent, g.name)
}

// unloadWhere unloads the groups gone says this gateway no longer
// coordinates.
func (co *coordinator) unloadWhere(gone func(group string) bool) {
	co.mu.Lock()
	defer co.mu.Unlock()
	for name, g := range co.groups {
		if gone(name) {
			co.unload(g)
		}
	}
}

// load makes sure the coordinator holds group name as the store has it,
// at view epoch: a group not in memory is loaded from its document (if
// any); one in memory since an older view is kept only if the stored
// version is still the one this coordinator read or wrote last. It
// reports false when it could not say (the store did not answer) for a
// group not in memory: the request is answered
// COORDINATOR_LOAD_IN_PROGRESS, which clients retry, rather than run on
// a group that may be stored with members. A group in memory goes on as
// it is when the store does not answer.
//
// A read races this coordinator's own writes: one that completes while
// the document is being read makes what was read older than memory (a
// deleted group's document, read just before its deletion, would bring
// back members that left). So a read during which a write of the group
// completed is not used; it is read again, at most loadAttempts times.
func (co *coordinator) load(ctx context.Context, name string, epoch uint64) bool {
	k := co.keep
	if k.docs == nil {
		return true
	}
	co.mu.Lock()
	defer co.mu.Unlock()
	co.epoch = epoch
	if co.settled(name, epoch) {
		return true
	}
	k.loading[name]++
	defer func() {
		if k.loading[name]--; k.loading[name] == 0 {
			delete(k.loading, name)
			delete(k.wrote, name)
		}
	}()
	for range loadAttempts {
		wrote := k.wrote[name]
		co.mu.Unlock()
		body, v, err := k.docs.Document(ctx, groupDocKey(name))
		co.mu.Lock()
		if err != nil {
			co.log.Info("kafka: reading a group's membership from the store", "group", name, "err", err)
			return co.groups[name] != nil
		}
		if co.settled(name, epoch) {
			return true
		}
		if k.wrote[name] != wrote {
			continue // a write of the group completed meanwhile: read again
		}
		var d *groupDoc
		if body != nil {
			d = &groupDoc{}
			if err := json.Unmarshal(body, d); err != nil {
				co.log.Warn("kafka: a group's stored membership is unreadable; the group starts empty", "group", name, "err", err)
				d = nil
			}
		}
		co.install(name, epoch, d, v)
		return true
	}
	return co.groups[name] != nil
}

// loadAttempts bounds the reads of one load.
const loadAttempts = 5

// settled reports whether memory decides group name without a read (under
// the coordinator's mutex): it is held since view epoch; or this
// coordinator is writing it (memory is newer than the store, and a
// conflict, if any, unloads it), or deleting it (it emptied here); or
// it was found with no stored members at view epoch.
func (co *coordinator) settled(name string, epoch uint64) bool {
	k := co.keep
	g := co.groups[name]
	if g != nil && g.epoch == epoch {
		return true
	}
	doc, queued := k.dirty[name]
	if g != nil && (queued || k.writing(name)) {
		g.epoch = epoch
		return true
	}
	if g == nil && (queued && doc == nil || k.busy[name]) {
		return true
	}
	at, absent := k.absent[name]
	return g == nil && absent && at == epoch
}

// install makes the coordinator hold group name as document d at version
// v says (nil: none stored), at view epoch (under the coordinator's
// mutex): a group in memory at that version stays; one at another is
// replaced.
func (co *coordinator) install(name string, epoch uint64, d *groupDoc, v uint64) {
	k := co.keep
	if g := co.groups[name]; g != nil {
		if k.versions[name] == v {
			g.epoch = epoch
			return
		}
		co.log.Info("kafka: a group was changed by another coordinator; loading it", "group", name)
		co.unload(g)
	}
	if v == 0 {
		delete(k.versions, name)
	} else {
		k.versions[name] = v
	}
	if d == nil || len(d.Members) == 0 {
		if len(k.absent) >= maxAbsent {
			clear(k.absent)
		}
		k.absent[name] = epoch
		return
	}
	delete(k.absent, name)
	g := restore(name, d)
	g.epoch = epoch
	co.groups[name] = g
	for _, m := range g.members {
		co.touch(g, m)
	}
}

// sweepGroupDocs loads, on their coordinator, the stored groups not held
// in memory, so that a group whose members all went (with the
// coordinator that wrote it) is emptied by their session timers and its
// document deleted.
func (s *Server) sweepGroupDocs(ctx context.Context) {
	s.groups.sweep(ctx, func(group string) bool {
		_, local := s.route.owner(ctx, group)
		return local
	}, s.route.epoch())
}

// sweep loads the stored groups local says this gateway coordinates.
func (co *coordinator) sweep(ctx context.Context, local func(group string) bool, epoch uint64) {
	if co.keep.docs == nil {
		return
	}
	keys, err := co.keep.docs.DocumentKeys(ctx, groupDocPrefix)
	if err != nil {
		co.log.Info("kafka: listing the stored groups", "err", err)
		return
	}
	for _, key := range keys {
		if name := key[len(groupDocPrefix):]; local(name) {
			co.load(ctx, name, epoch)
		}
	}
}
