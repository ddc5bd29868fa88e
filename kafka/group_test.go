package kafka

import (
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// fakeTimers replaces the coordinator's time.AfterFunc: the test fires
// the timers it wants, by their duration, and none fires by itself.
type fakeTimers struct {
	mu  sync.Mutex
	fns map[time.Duration][]func()
}

func (f *fakeTimers) afterFunc(d time.Duration, fn func()) *time.Timer {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fns[d] = append(f.fns[d], fn)
	return time.NewTimer(time.Hour) // stopped or left: it never matters
}

// fire runs every timer of duration d set so far (stale ones too: the
// coordinator must ignore a timer it replaced).
func (f *fakeTimers) fire(d time.Duration) {
	f.mu.Lock()
	fns := f.fns[d]
	f.fns[d] = nil
	f.mu.Unlock()
	for _, fn := range fns {
		fn()
	}
}

func testJoin(member string, session time.Duration) *joinRequest {
	p := kmsg.NewJoinGroupRequestProtocol()
	p.Name = "range"
	return &joinRequest{group: "g", memberID: member, clientID: "c", protocolType: "consumer",
		protocols: []kmsg.JoinGroupRequestProtocol{p}, session: session, rebalance: time.Minute}
}

// recv takes an answer that must be there already.
func recv[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	default:
		t.Fatal("no answer yet")
	}
	var zero T
	return zero
}

// TestGroupSessionTimeout: a member that stops heartbeating is removed
// when its session times out, and the group rebalances without it; a
// member that does not rejoin a rebalance is removed when the rebalance
// times out.
func TestGroupSessionTimeout(t *testing.T) {
	ft := &fakeTimers{fns: map[time.Duration][]func(){}}
	co := newCoordinator(nil, slog.Default())
	co.afterFunc = ft.afterFunc
	const s1, s2 = 10 * time.Second, 20 * time.Second

	a := recv(t, co.join(testJoin("", s1)))
	if a.code != 0 || a.generation != 1 || a.leader != a.memberID {
		t.Fatalf("first join: %+v", a)
	}
	b := co.join(testJoin("", s2)) // a rebalance: b waits for a
	select {
	case <-b:
		t.Fatal("b answered before a rejoined")
	default:
	}
	if code := co.heartbeat("g", a.memberID, 1); code != kerr.RebalanceInProgress.Code {
		t.Fatalf("heartbeat during the rebalance: %d", code)
	}
	// The generation ending still commits (eager clients commit what
	// they revoke), a stale one does not.
	if code := co.commitCheck("g", a.memberID, 1); code != 0 {
		t.Fatalf("commit of the ending generation: %d", code)
	}
	if code := co.commitCheck("g", a.memberID, 0); code != kerr.IllegalGeneration.Code {
		t.Fatalf("commit of a stale generation: %d", code)
	}
	// a never rejoins: the rebalance times out and goes on without it.
	ft.fire(time.Minute)
	br := recv(t, b)
	if br.code != 0 || br.generation != 2 || br.leader != br.memberID || len(br.members) != 1 {
		t.Fatalf("b after the rebalance timeout: %+v", br)
	}
	if code := co.heartbeat("g", a.memberID, 2); code != kerr.UnknownMemberID.Code {
		t.Fatalf("a's heartbeat after removal: %d", code)
	}
	if code := co.commitCheck("g", br.memberID, 2); code != kerr.RebalanceInProgress.Code {
		t.Fatalf("commit before SyncGroup: %d", code)
	}
	if sr := recv(t, co.sync("g", br.memberID, 2, nil, nil, nil)); sr.code != 0 {
		t.Fatalf("b's sync: %+v", sr)
	}
	// b's session times out (the stale timers of s1 do nothing).
	ft.fire(s1)
	if code := co.heartbeat("g", br.memberID, 2); code != 0 {
		t.Fatalf("b's heartbeat: %d", code)
	}
	ft.fire(s2)
	if code := co.heartbeat("g", br.memberID, 2); code != kerr.UnknownMemberID.Code {
		t.Fatalf("b's heartbeat after its session timed out: %d", code)
	}
	if d := co.describe("g", false); d.State != "Dead" {
		t.Fatalf("group after its last member expired: %+v", d)
	}
}

// TestGroupStaticMemberReplaced: a static member that joins again under a
// new member id (a restarted process) replaces its old self at once,
// without waiting for the old session to time out.
func TestGroupStaticMemberReplaced(t *testing.T) {
	ft := &fakeTimers{fns: map[time.Duration][]func(){}}
	co := newCoordinator(nil, slog.Default())
	co.afterFunc = ft.afterFunc
	first := testJoin("", time.Minute)
	first.instanceID = "worker-1"
	a := recv(t, co.join(first))
	if a.code != 0 {
		t.Fatalf("first join: %+v", a)
	}
	again := testJoin("", time.Minute)
	again.instanceID = "worker-1"
	b := recv(t, co.join(again))
	if b.code != 0 || b.generation != 2 || b.memberID == a.memberID || len(b.members) != 1 {
		t.Fatalf("rejoin of the static member: %+v", b)
	}
	if code := co.heartbeat("g", a.memberID, 2); code != kerr.UnknownMemberID.Code {
		t.Fatalf("the replaced member's heartbeat: %d", code)
	}
}

// TestGroupDeleteGuard: a group with a member cannot be deleted; while a
// delete of an empty one runs, nothing joins or commits for it (a
// retriable code), and afterwards the group lives again. subscribed
// reads the topics of members of the consumer protocol.
func TestGroupDeleteGuard(t *testing.T) {
	ft := &fakeTimers{fns: map[time.Duration][]func(){}}
	co := newCoordinator(nil, slog.Default())
	co.afterFunc = ft.afterFunc
	j := testJoin("", time.Minute)
	j.protocols[0].Metadata = (&kmsg.ConsumerMemberMetadata{Topics: []string{"events"}}).AppendTo(nil)
	a := recv(t, co.join(j))
	if a.code != 0 {
		t.Fatalf("join: %+v", a)
	}
	if live, topics, known := co.subscribed("g"); !live || !known || !topics["events"] || len(topics) != 1 {
		t.Fatalf("subscribed: %v %v %v", live, topics, known)
	}
	if co.deleteBegin("g") {
		t.Fatal("a group with a member was deleted")
	}
	if code := co.leave("g", a.memberID, ""); code != 0 {
		t.Fatalf("leave: %d", code)
	}
	if live, _, known := co.subscribed("g"); live || !known {
		t.Fatalf("subscribed after the leave: %v %v", live, known)
	}
	if !co.deleteBegin("g") {
		t.Fatal("an empty group could not be deleted")
	}
	if r := recv(t, co.join(testJoin("", time.Minute))); r.code != kerr.CoordinatorLoadInProgress.Code {
		t.Fatalf("join during the delete: %+v", r)
	}
	if code := co.commitCheck("g", "", -1); code != kerr.CoordinatorLoadInProgress.Code {
		t.Fatalf("commit during the delete: %d", code)
	}
	co.deleteEnd("g")
	if code := co.commitCheck("g", "", -1); code != 0 {
		t.Fatalf("commit after the delete: %d", code)
	}
	if r := recv(t, co.join(testJoin("", time.Minute))); r.code != 0 {
		t.Fatalf("join after the delete: %+v", r)
	}
	j = testJoin("", time.Minute)
	j.group, j.protocolType = "other", "connect"
	recv(t, co.join(j))
	if live, _, known := co.subscribed("other"); !live || known {
		t.Fatalf("a connect group's topics are not known: %v %v", live, known)
	}
}
