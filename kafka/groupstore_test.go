package kafka

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"topicgate/topicstore"
)

// memDocs is topicstore.Documents in memory. lost, when set, makes the
// next SetDocument store its change and then answer ErrOutcomeUnknown;
// refuse makes it answer errDown without storing anything; down makes
// every read answer errDown; reads counts the reads.
type memDocs struct {
	mu     sync.Mutex
	docs   map[string][]byte
	vers   map[string]uint64
	next   uint64
	lost   bool
	refuse bool
	down   bool
	reads  int
}

var errDown = errors.New("the store is unavailable")

func newMemDocs() *memDocs {
	return &memDocs{docs: map[string][]byte{}, vers: map[string]uint64{}}
}

func (m *memDocs) Document(_ context.Context, key string) ([]byte, uint64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.reads++
	if m.down {
		return nil, 0, errDown
	}
	return m.docs[key], m.vers[key], nil
}

func (m *memDocs) SetDocument(_ context.Context, key string, expect uint64, doc []byte) (uint64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.refuse {
		m.refuse = false
		return 0, errDown
	}
	if m.vers[key] != expect {
		return 0, topicstore.ErrDocumentConflict
	}
	m.next++
	if doc == nil {
		delete(m.docs, key)
		delete(m.vers, key)
	} else {
		m.docs[key], m.vers[key] = doc, m.next
	}
	if m.lost {
		m.lost = false
		return 0, topicstore.ErrOutcomeUnknown
	}
	return m.vers[key], nil
}

func (m *memDocs) DocumentKeys(_ context.Context, prefix string) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for k := range m.docs {
		if strings.HasPrefix(k, prefix) {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out, nil
}

// storedCoordinator is a coordinator on docs with fake timers.
func storedCoordinator(docs topicstore.Documents) (*coordinator, *fakeTimers) {
	ft := &fakeTimers{fns: map[time.Duration][]func(){}}
	co := newCoordinator(docs, slog.Default())
	co.afterFunc = ft.afterFunc
	return co, ft
}

// flush writes what co queued.
func flush(co *coordinator) {
	for co.writeOne(true) {
	}
}

// stableGroup makes group g of two members on co, the leader assigning
// "A" and "B", and returns their member ids (leader first).
func stableGroup(t *testing.T, co *coordinator) (string, string) {
	t.Helper()
	a := recv(t, co.join(testJoin("", time.Minute)))
	bch := co.join(testJoin("", time.Minute))
	ar := recv(t, co.join(testJoin(a.memberID, time.Minute)))
	br := recv(t, bch)
	if ar.code != 0 || br.code != 0 || ar.generation != 2 {
		t.Fatalf("joins: %+v %+v", ar, br)
	}
	bs := co.sync("g", br.memberID, 2, nil, nil, nil)
	as := []kmsg.SyncGroupRequestGroupAssignment{{MemberID: ar.memberID, MemberAssignment: []byte("A")},
		{MemberID: br.memberID, MemberAssignment: []byte("B")}}
	if r := recv(t, co.sync("g", ar.memberID, 2, nil, nil, as)); r.code != 0 || string(r.assignment) != "A" {
		t.Fatalf("leader's sync: %+v", r)
	}
	if r := recv(t, bs); r.code != 0 || string(r.assignment) != "B" {
		t.Fatalf("follower's sync: %+v", r)
	}
	return ar.memberID, br.memberID
}

// writtenGroup makes the stable group of stableGroup on a coordinator
// of docs and writes it; it returns the coordinator and the members.
func writtenGroup(t *testing.T, docs topicstore.Documents) (*coordinator, string, string) {
	t.Helper()
	co, _ := storedCoordinator(docs)
	a, b := stableGroup(t, co)
	flush(co)
	return co, a, b
}

// aloneAfterLeave makes b leave the stable group of a and b on co, and a
// rejoin (with join, or testJoin's) and sync alone, assigned "AB"; it
// returns a's join answer.
func aloneAfterLeave(t *testing.T, co *coordinator, a, b string, join *joinRequest) joinResult {
	t.Helper()
	co.leave("g", b, "")
	if join == nil {
		join = testJoin(a, time.Minute)
	}
	ar := recv(t, co.join(join))
	recv(t, co.sync("g", a, ar.generation, nil, nil, []kmsg.SyncGroupRequestGroupAssignment{{MemberID: a, MemberAssignment: []byte("AB")}}))
	return ar
}

// TestGroupReloaded: a coordinator that starts on the store a group was
// written to (a restart, or another gateway) loads it at its first
// request: the members go on at their generation with their
// assignments, and a member that does not come back is removed when its
// session times out.
func TestGroupReloaded(t *testing.T) {
	docs := newMemDocs()
	_, a, b := writtenGroup(t, docs)
	if _, v, _ := docs.Document(context.Background(), groupDocKey("g")); v == 0 {
		t.Fatal("the stable group was not written")
	}

	co2, ft := storedCoordinator(docs)
	co2.load(context.Background(), "g", 0)
	if code := co2.heartbeat("g", a, 2); code != 0 {
		t.Fatalf("a's heartbeat on the new coordinator: %d", code)
	}
	if r := recv(t, co2.sync("g", b, 2, nil, nil, nil)); r.code != 0 || string(r.assignment) != "B" {
		t.Fatalf("b's sync again: %+v", r)
	}
	if d := co2.describe("g", true); d.State != stateStable || len(d.Members) != 2 {
		t.Fatalf("the loaded group: %+v", d)
	}
	// b went with the old coordinator: its session ends, a rejoins alone.
	// (a's session timer restarted after b's: firing the minute's timers
	// expires b only, as a heartbeat newer than them renewed a's.)
	if code := co2.heartbeat("g", a, 2); code != 0 {
		t.Fatal(code)
	}
	ft.fire(time.Minute)
	if code := co2.heartbeat("g", a, 2); code != kerr.RebalanceInProgress.Code && code != kerr.UnknownMemberID.Code {
		t.Fatalf("a after b's session ended: %d", code)
	}
}

// TestGroupEmptyDeleted: a group whose members all leave is deleted from
// the store; nothing is written for a group that never got stable.
func TestGroupEmptyDeleted(t *testing.T) {
	docs := newMemDocs()
	co, _ := storedCoordinator(docs)
	a, b := stableGroup(t, co)
	flush(co)
	co.leave("g", b, "")
	co.leave("g", a, "")
	flush(co)
	if keys, _ := docs.DocumentKeys(context.Background(), ""); len(keys) != 0 {
		t.Fatalf("documents left: %v", keys)
	}
	recv(t, co.join(testJoin("", time.Minute))) // joined, not synced
	flush(co)
	if keys, _ := docs.DocumentKeys(context.Background(), ""); len(keys) != 0 {
		t.Fatalf("a group that never synced was written: %v", keys)
	}
}

// TestGroupTakenOver: of two coordinators holding the same stored group
// (their views of the gateways differed), the one whose write is based
// on a version the other replaced is refused: it drops the group from
// memory, its waiting members are told NOT_COORDINATOR, and the store
// keeps the other's.
func TestGroupTakenOver(t *testing.T) {
	docs := newMemDocs()
	ctx := context.Background()
	co1, a, b := writtenGroup(t, docs)

	co2, _ := storedCoordinator(docs)
	co2.load(ctx, "g", 0)
	aloneAfterLeave(t, co2, a, b, nil) // a rebalance on co2: a rejoins, syncs, co2 writes
	flush(co2)
	stored, _, _ := docs.Document(ctx, groupDocKey("g"))

	// co1 still holds the old generation; a join there starts a
	// rebalance whose write comes too late.
	wait := co1.join(testJoin("", time.Minute))
	co1.leave("g", a, "")
	co1.leave("g", b, "") // co1's group: only the waiting joiner
	flush(co1)
	r := recv(t, wait)
	if r.code != 0 || r.leader != r.memberID {
		t.Fatalf("joiner on co1: %+v", r)
	}
	recv(t, co1.sync("g", r.memberID, r.generation, nil, nil, []kmsg.SyncGroupRequestGroupAssignment{{MemberID: r.memberID, MemberAssignment: []byte("AB")}}))
	flush(co1)
	if co1.describe("g", false).State != "Dead" {
		t.Fatal("co1 still holds the group after its write was refused")
	}
	now, _, _ := docs.Document(ctx, groupDocKey("g"))
	if string(now) != string(stored) {
		t.Fatal("the refused write changed the stored group")
	}
}

// TestGroupWriteOutcomeUnknown: a write whose answer is lost but that was
// stored is this coordinator's (its own id in the document): it goes on
// from it, and its next write is taken.
func TestGroupWriteOutcomeUnknown(t *testing.T) {
	docs := newMemDocs()
	co, _ := storedCoordinator(docs)
	docs.lost = true
	a, b := stableGroup(t, co)
	flush(co)
	_, v, _ := docs.Document(context.Background(), groupDocKey("g"))
	co.mu.Lock()
	got := co.keep.versions["g"]
	co.mu.Unlock()
	if v == 0 || got != v {
		t.Fatalf("stored version %d, the coordinator's %d", v, got)
	}
	co.leave("g", b, "")
	co.leave("g", a, "")
	flush(co)
	if keys, _ := docs.DocumentKeys(context.Background(), ""); len(keys) != 0 {
		t.Fatalf("the empty group's deletion was refused: %v", keys)
	}
}

// TestGroupSweep: a stored group no member asks for any more (its
// members went with the coordinator that wrote it) is loaded by the
// sweep of its coordinator, emptied when the sessions end, and deleted;
// groups another gateway coordinates are left to it.
func TestGroupSweep(t *testing.T) {
	docs := newMemDocs()
	co1, _ := storedCoordinator(docs)
	stableGroup(t, co1)
	flush(co1)

	co2, ft := storedCoordinator(docs)
	co2.sweep(context.Background(), func(string) bool { return false }, 0)
	if d := co2.describe("g", false); d.State != "Dead" {
		t.Fatalf("a group coordinated elsewhere was loaded: %+v", d)
	}
	co2.sweep(context.Background(), func(string) bool { return true }, 0)
	if d := co2.describe("g", false); d.State != stateStable {
		t.Fatalf("the swept group: %+v", d)
	}
	ft.fire(time.Minute)
	flush(co2)
	if keys, _ := docs.DocumentKeys(context.Background(), ""); len(keys) != 0 {
		t.Fatalf("documents left after the members' sessions ended: %v", keys)
	}
}

// slowDocs is memDocs whose reads see the store as it was when they
// began and run during, the first time, what the test sets: the other
// requests a slow read lets through.
type slowDocs struct {
	*memDocs
	during func()
}

func (s *slowDocs) Document(ctx context.Context, key string) ([]byte, uint64, error) {
	doc, v, err := s.memDocs.Document(ctx, key)
	if f := s.during; f != nil {
		s.during = nil
		f()
	}
	return doc, v, err
}

// TestGroupLoadRacesWrite: a read of a group's document that other
// requests overtake (they create the group, complete a rebalance, and its
// write completes) answers what the store held before: the group in
// memory is newer and stays, members and assignments, rather than being
// dropped for the older document (which, for a deleted group, brings back
// members that left).
func TestGroupLoadRacesWrite(t *testing.T) {
	docs := &slowDocs{memDocs: newMemDocs()}
	co, _ := storedCoordinator(docs)
	var a, b string
	docs.during = func() {
		a, b = stableGroup(t, co)
		flush(co)
	}
	co.load(context.Background(), "g", 0)
	if _, v, _ := docs.memDocs.Document(context.Background(), groupDocKey("g")); v == 0 {
		t.Fatal("the stable group was not written")
	}
	if r := recv(t, co.sync("g", b, 2, nil, nil, nil)); r.code != 0 || string(r.assignment) != "B" {
		t.Fatalf("b's sync after the slow read: %+v", r)
	}
	if code := co.heartbeat("g", a, 2); code != 0 {
		t.Fatalf("a's heartbeat after the slow read: %d", code)
	}

	// The same with a group written at a view of the gateways older than
	// the read's: the read started before the write completed, so it
	// cannot tell memory is stale, and memory stays.
	docs.during = func() {
		aloneAfterLeave(t, co, a, b, nil)
		flush(co)
	}
	co.load(context.Background(), "g", 1)
	if d := co.describe("g", true); d.State != stateStable || len(d.Members) != 1 {
		t.Fatalf("the group after a slow read at a new view: %+v", d)
	}
}

// storedDoc is the group document docs holds for g.
func storedDoc(t *testing.T, docs *memDocs) groupDoc {
	t.Helper()
	body, _, _ := docs.Document(context.Background(), groupDocKey("g"))
	var d groupDoc
	if err := json.Unmarshal(body, &d); err != nil {
		t.Fatalf("the stored group: %v", err)
	}
	return d
}

// TestGroupWriteFailsAfterMove: a coordinator that loaded a group
// another one wrote, and whose first write of it fails without being
// stored, keeps the group (the version it expected is still the stored
// one: nothing moved on) and writes it again.
func TestGroupWriteFailsAfterMove(t *testing.T) {
	docs := newMemDocs()
	ctx := context.Background()
	_, a, b := writtenGroup(t, docs)

	co2, ft := storedCoordinator(docs)
	co2.load(ctx, "g", 0)
	ar := aloneAfterLeave(t, co2, a, b, nil)
	docs.refuse = true
	co2.writeOne(false) // not stopping: a failed write is tried again
	if d := co2.describe("g", false); d.State != stateStable || len(d.Members) != 1 {
		t.Fatalf("the group after a failed write: %+v", d)
	}
	if code := co2.heartbeat("g", a, ar.generation); code != 0 {
		t.Fatalf("a's heartbeat after the failed write: %d", code)
	}
	ft.fire(retryWrite)
	flush(co2)
	if d := storedDoc(t, docs); d.Writer != co2.keep.self || d.Generation != ar.generation {
		t.Fatalf("the stored group after the retry: writer %s generation %d", d.Writer, d.Generation)
	}
}

// TestGroupLoadUnavailable: a coordinator that cannot read a group it
// does not hold says so (the request is answered
// COORDINATOR_LOAD_IN_PROGRESS) instead of starting the group anew; one
// it holds goes on.
func TestGroupLoadUnavailable(t *testing.T) {
	docs := newMemDocs()
	ctx := context.Background()
	_, a, _ := writtenGroup(t, docs)

	co2, _ := storedCoordinator(docs)
	docs.down = true
	if co2.load(ctx, "g", 0) {
		t.Fatal("a load the store did not answer succeeded")
	}
	if d := co2.describe("g", false); d.State != "Dead" {
		t.Fatalf("a group was made up: %+v", d)
	}
	docs.down = false
	if !co2.load(ctx, "g", 0) || co2.heartbeat("g", a, 2) != 0 {
		t.Fatal("the group was not loaded once the store answered")
	}
	docs.down = true
	if !co2.load(ctx, "g", 1) {
		t.Fatal("a group held in memory did not go on when the store did not answer")
	}
}

// TestGroupAbsentReadOnce: a group with nothing stored (one only ever
// committed to, generation -1) is read once per view of the gateways,
// not at each request.
func TestGroupAbsentReadOnce(t *testing.T) {
	docs := newMemDocs()
	ctx := context.Background()
	co, _ := storedCoordinator(docs)
	for range 3 {
		co.load(ctx, "simple", 0)
	}
	if docs.reads != 1 {
		t.Fatalf("%d reads at one view, want 1", docs.reads)
	}
	co.load(ctx, "simple", 1)
	if docs.reads != 2 {
		t.Fatalf("%d reads after a new view, want 2", docs.reads)
	}
	// Bounded: however many names are asked for, at most maxAbsent are
	// remembered.
	for i := range maxAbsent + 10 {
		co.load(ctx, fmt.Sprint("simple-", i), 1)
	}
	if n := len(co.keep.absent); n > maxAbsent {
		t.Fatalf("%d absent groups remembered, at most %d", n, maxAbsent)
	}
}

// TestGroupTooLarge: a group whose document would pass the store's limit
// is kept in memory only, and the older document is deleted (a new
// coordinator must not load a generation that is no longer the group's).
func TestGroupTooLarge(t *testing.T) {
	docs := newMemDocs()
	co, _ := storedCoordinator(docs)
	a, b := stableGroup(t, co)
	flush(co)
	join := testJoin(a, time.Minute)
	join.protocols[0].Metadata = make([]byte, topicstore.MaxDocumentBytes)
	ar := aloneAfterLeave(t, co, a, b, join)
	flush(co)
	if keys, _ := docs.DocumentKeys(context.Background(), ""); len(keys) != 0 {
		t.Fatalf("documents left: %v", keys)
	}
	if code := co.heartbeat("g", a, ar.generation); code != 0 {
		t.Fatalf("a's heartbeat: %d", code)
	}
}
