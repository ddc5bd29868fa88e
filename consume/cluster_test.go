package consume

import (
	"fmt"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"topicgate/topicstore"
)

func members(spec ...any) []topicstore.GroupMember {
	var out []topicstore.GroupMember
	for i := 0; i < len(spec); i += 2 {
		out = append(out, topicstore.GroupMember{Gateway: spec[i].(string), Announcement: topicstore.Announcement{Sessions: spec[i+1].(int)}})
	}
	return out
}

// TestSplitGroup: the split among gateways is proportional to their
// sessions, contiguous in gateway order, the same for the same members,
// and moves little when one member changes.
func TestSplitGroup(t *testing.T) {
	cases := []struct {
		n    int
		ms   []topicstore.GroupMember
		want string
	}{
		{4, members("a", 1, "b", 1), "a:[0 1] b:[2 3]"},
		{4, members("a", 1), "a:[0 1 2 3]"},
		{4, members("a", 1, "b", 2), "a:[0] b:[1 2 3]"},
		{5, members("a", 1, "b", 1), "a:[0 1 2] b:[3 4]"},
		{6, members("a", 1, "b", 2, "c", 1), "a:[0 1] b:[2 3 4] c:[5]"},
		{2, members("a", 1, "b", 1, "c", 1), "a:[0] b:[1] c:[]"},
		{4, members("a", 0, "b", 1), "a:[] b:[0 1 2 3]"},
		{0, members("a", 1), "a:[]"},
		{4, nil, ""},
	}
	for _, c := range cases {
		got := splitGroup(parts(c.n), c.ms)
		var out []string
		for _, m := range c.ms {
			out = append(out, fmt.Sprintf("%s:%v", m.Gateway, got[m.Gateway]))
		}
		require.Equal(t, c.want, joinSpace(out), "%d partitions over %v", c.n, c.ms)
		require.Equal(t, got, splitGroup(parts(c.n), c.ms), "the same members give the same split")
	}

	// Every session of the consumer ends with floor(P/S) or ceil(P/S)
	// partitions once each gateway balances its share (balance), for
	// every member list of up to 3 gateways with up to 3 sessions each.
	for p := 0; p <= 9; p++ {
		for a := 0; a <= 3; a++ {
			for b := 0; b <= 3; b++ {
				for c := 0; c <= 3; c++ {
					ms := members("a", a, "b", b, "c", c)
					s := a + b + c
					split := splitGroup(parts(p), ms)
					total := 0
					for _, m := range ms {
						sessions := make([]uint32, m.Sessions)
						for i := range sessions {
							sessions[i] = uint32(i + 1)
						}
						counts := map[uint32]int{}
						for _, o := range balance(split[m.Gateway], sessions, nil, nil) {
							counts[o]++
						}
						for _, sess := range sessions {
							require.GreaterOrEqual(t, counts[sess], p/max(s, 1), "P=%d %v", p, ms)
							require.LessOrEqual(t, counts[sess], (p+s-1)/max(s, 1), "P=%d %v", p, ms)
						}
						total += len(split[m.Gateway])
					}
					if s > 0 {
						require.Equal(t, p, total, "every partition goes to some gateway: P=%d %v", p, ms)
					}
				}
			}
		}
	}
}

func joinSpace(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += " "
		}
		out += x
	}
	return out
}

// fakeCluster is an in-memory GroupCoordinator shared by gateways: what
// one announces, the others see at once; the epoch moves when a gateway's
// session count changes, as the JetStream store's does.
type fakeCluster struct {
	mu      sync.Mutex
	seq     uint64
	epoch   uint64
	recs    map[string]topicstore.Announcement
	expired map[string]bool
	ch      chan struct{}
}

func newFakeCluster() *fakeCluster {
	return &fakeCluster{recs: map[string]topicstore.Announcement{}, expired: map[string]bool{}, ch: make(chan struct{})}
}

func (f *fakeCluster) notify() {
	close(f.ch)
	f.ch = make(chan struct{})
}

// expire makes gw's member expire (its gateway died).
func (f *fakeCluster) expire(gw string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.expired[gw] = true
	f.notify()
}

// changes returns the channel closed at the next change.
func (f *fakeCluster) changes() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.ch
}

type fakeGateway struct {
	f  *fakeCluster
	id string
}

func (g fakeGateway) GatewayID() string { return g.id }

func (g fakeGateway) Announce(topic, consumer string, a topicstore.Announcement) error {
	f := g.f
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seq++
	if f.recs[g.id].Sessions != a.Sessions {
		f.epoch = f.seq
	}
	a.Held = slices.Clone(a.Held)
	f.recs[g.id] = a
	f.notify()
	return nil
}

func (g fakeGateway) Members(topic, consumer string) (topicstore.GroupView, <-chan struct{}, error) {
	f := g.f
	f.mu.Lock()
	defer f.mu.Unlock()
	v := topicstore.GroupView{Epoch: f.epoch}
	for gw, a := range f.recs {
		if a.Sessions > 0 && !f.expired[gw] {
			v.Members = append(v.Members, topicstore.GroupMember{Gateway: gw, Announcement: a})
		}
	}
	sort.Slice(v.Members, func(i, j int) bool { return v.Members[i].Gateway < v.Members[j].Gateway })
	return v, f.ch, nil
}

// TestClusterGroupHandoff plays two gateways' read groups on a fake
// cluster: a joining gateway gets its share only once the other let it go
// (never both at once), a partition read by an open transaction moves when
// the transaction ends, a leaving or expired gateway's share goes to the
// other.
func TestClusterGroupHandoff(t *testing.T) {
	now := time.Unix(1000, 0)
	clock := func() time.Time { return now }
	f := newFakeCluster()
	gateway := func(id string) *Group {
		r := Groups{clock: clock, grace: 10 * time.Second, co: fakeGateway{f, id}}
		return r.Get("t", "c")
	}
	a, b := gateway("a"), gateway("b")
	all := parts(4)
	join := func(g *Group, pid uint32, txID uint64) {
		g.join(joinReq{pid: pid, partitions: all, now: now, idle: time.Hour, txID: txID})
	}
	heldLocked := func(g *Group) []int32 {
		return slices.Sorted(func(yield func(int32) bool) {
			for p := range g.owner {
				if !yield(p) {
					return
				}
			}
		})
	}
	// until waits for a and b to hold wantA and wantB, checking at every
	// change before that no partition is held by both gateways (but after
	// an expiry: the dead gateway's own view is not the others').
	exclusive := true
	until := func(wantA, wantB []int32) {
		t.Helper()
		timeout := time.After(5 * time.Second)
		for {
			ch := f.changes()
			// Both at one instant: read one after the other, a partition
			// a gives up between the reads and b takes would look held
			// twice (seen once in CI).
			a.mu.Lock()
			b.mu.Lock()
			ha, hb := heldLocked(a), heldLocked(b)
			b.mu.Unlock()
			a.mu.Unlock()
			for _, p := range ha {
				if exclusive {
					require.NotContains(t, hb, p, "partition %d held by both gateways", p)
				}
			}
			if slices.Equal(ha, wantA) && slices.Equal(hb, wantB) {
				return
			}
			select {
			case <-ch:
			case <-timeout:
				t.Fatalf("a holds %v, b %v; want %v and %v", ha, hb, wantA, wantB)
			}
		}
	}

	join(a, 1, 0)
	until(all, nil)
	require.False(t, a.clusterPending())

	join(b, 2, 0)
	until([]int32{0, 1}, []int32{2, 3})

	b.leave(2)
	until(all, nil)

	// A's open transaction read every partition: B's share waits for it.
	join(a, 1, 7)
	join(b, 2, 0)
	until(all, nil)
	require.True(t, b.clusterPending(), "b waits for a to let its share go")
	a.releaseTx(1, 7)
	until([]int32{0, 1}, []int32{2, 3})

	// B's gateway dies: its share expires and goes to A.
	exclusive = false
	f.expire("b")
	until(all, nil)

	// A gateway that leaves with its last session stops its watcher.
	a.leave(1)
	a.mu.Lock()
	require.Nil(t, a.cl.stop)
	a.mu.Unlock()
}

// TestClusterGroupIdle: a session that stopped reading longer than the
// idle limit leaves when the group changes, as another session's join
// would have it leave on one gateway, so a gateway joining gets all.
func TestClusterGroupIdle(t *testing.T) {
	var ns atomic.Int64
	ns.Store(time.Unix(1000, 0).UnixNano())
	clock := func() time.Time { return time.Unix(0, ns.Load()) }
	f := newFakeCluster()
	gateway := func(id string) *Group {
		r := Groups{clock: clock, grace: 10 * time.Second, co: fakeGateway{f, id}}
		return r.Get("t", "c")
	}
	a, b := gateway("a"), gateway("b")
	join := func(g *Group, pid uint32) []int32 {
		held, _ := g.join(joinReq{pid: pid, partitions: parts(4), now: clock(), idle: time.Minute})
		return held
	}
	join(a, 1)
	ns.Add(int64(2 * time.Minute))
	join(b, 2)
	timeout := time.After(5 * time.Second)
	for {
		ch := f.changes()
		if held := join(b, 2); len(held) == 4 {
			break
		}
		select {
		case <-ch:
		case <-timeout:
			t.Fatal("b never gets the partitions of a's idle session")
		}
	}
	a.mu.Lock()
	require.Empty(t, a.sessions)
	require.Nil(t, a.cl.stop, "a has no session left: its watcher stopped")
	a.mu.Unlock()
}

// TestClusterGroupAckWait: a gateway killed without leaving never
// acknowledges a later join; after clusterAckWait the others stop waiting
// for it (but leave what it may still hold, its share, alone until it
// expires).
func TestClusterGroupAckWait(t *testing.T) {
	var ns atomic.Int64
	ns.Store(time.Unix(1000, 0).UnixNano())
	clock := func() time.Time { return time.Unix(0, ns.Load()) }
	f := newFakeCluster()
	require.NoError(t, fakeGateway{f, "z"}.Announce("t", "c", topicstore.Announcement{Sessions: 1}))
	r := Groups{clock: clock, grace: 10 * time.Second, co: fakeGateway{f, "a"}}
	a := r.Get("t", "c")
	join := func() []int32 {
		held, _ := a.join(joinReq{pid: 1, partitions: parts(4), now: clock(), idle: time.Hour})
		return held
	}
	require.Empty(t, join())
	require.True(t, a.clusterPending(), "z has not seen a's join")
	ns.Add(int64(clusterAckWait / 2))
	require.Empty(t, join())
	ns.Add(int64(clusterAckWait)) // past the wait however late a's watcher saw a's own record
	require.Equal(t, []int32{0, 1}, join(), "a takes its share without z's acknowledgement")
	f.expire("z")
	timeout := time.After(5 * time.Second)
	for {
		ch := f.changes()
		if held := join(); len(held) == 4 {
			break
		}
		select {
		case <-ch:
		case <-timeout:
			t.Fatal("a never gets z's share after z expired")
		}
	}
}
