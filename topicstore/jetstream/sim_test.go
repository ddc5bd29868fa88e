package jetstream

import (
	"topicgate/topicstore/jetstream/fold"

	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"

	"topicgate/topicstore"
	"topicgate/topicstore/jetstream/jsext"
)

// The deterministic simulation of the commit protocol (outcomes that are
// not known: docs/cluster/durability.md). Several gateways, each a real
// Store made by newStore with a simIO, run the real committer code
// (prepare, runGroup, plan, the chain's resolution, wide transactions, the
// sweep) against simStream, an in-memory stream. Every call a gateway makes
// to the cluster or waits for from its fold is handed to one scheduler,
// which answers one at a time, in an order and with faults drawn from a
// seeded generator:
//
//   - a batch stored and its ack lost; a batch accepted by the leader and
//     stored later, after its gateway gave up waiting, or never (a leader
//     change lost it); a batch that never reached a leader; a refusal
//     answered as a timeout;
//   - a gateway crashed at any call it makes (its goroutine unwinds, its
//     state is gone; a new gateway replays the stream);
//   - a fold that stalls (a wait answered with a timeout), folds fed
//     message by message in between anything else;
//   - direct gets answered by a lagging replica that lacks the message;
//   - gateways' heartbeats that stop when they crash, so the others abort
//     their wide transactions and sweep their stagings.
//
// Only one goroutine runs at a time (the scheduler, or the one gateway it
// answered, until that gateway's next call), so a schedule is a function
// of its seed: a failing seed is printed and replays exactly
// (TOPICGATE_SIM_SEED=n). After each schedule the faults stop, everything
// settles, and a fresh gateway folds the whole stream to check the
// invariants: the fold applies without error (offsets contiguous); every
// acknowledged message is readable exactly once, every (producer, seqno)
// stored at most once, in one partition, in seqno order; a request
// answered unknown is stored whole or not at all, one refused not at all;
// no consumer position is behind one acknowledged; every chunk a record
// references is there; no wide transaction is left undecided, no batch
// left in doubt on a live gateway, and dead gateways' unreferenced chunks
// are swept. Workers of a shared consumer run among the commits, and each
// message handed to one is checked as it is answered (sim_shared_test.go).

// TestSimCommitProtocol runs simSchedules() schedules.
func TestSimCommitProtocol(t *testing.T) {
	var seeds []uint64
	if v := os.Getenv("TOPICGATE_SIM_SEED"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("TOPICGATE_SIM_SEED=%q: %v", v, err)
		}
		seeds = []uint64{n}
	} else {
		base := uint64(time.Now().UnixNano())
		for i := range simSchedules() {
			seeds = append(seeds, base+uint64(i))
		}
	}
	stats := simStats{}
	for _, seed := range seeds {
		m := newSim(t, seed)
		m.full = len(seeds) == 1
		err := m.run(simSteps)
		stats.add(m)
		if err == nil && m.full && os.Getenv("TOPICGATE_SIM_TRACE") != "" {
			for _, l := range m.trace {
				t.Log(l)
			}
		}
		if err != nil {
			for _, l := range m.trace {
				t.Log(l)
			}
			t.Fatalf("seed %d: %v\nreplay: TOPICGATE_SIM_SEED=%d go test ./topicstore/jetstream -run TestSimCommitProtocol -v", seed, err, seed)
		}
	}
	t.Logf("%d schedules: %s", len(seeds), stats)
}

// simSchedules is how many schedules a run tries: TOPICGATE_SIM_SCHEDULES,
// else 300 (about 8 s here).
func simSchedules() int {
	if v, err := strconv.Atoi(os.Getenv("TOPICGATE_SIM_SCHEDULES")); err == nil && v > 0 {
		return v
	}
	if testing.Short() {
		return 30
	}
	return 300
}

const (
	simSteps    = 3000
	simGateways = 3
	simTTL      = 5 * time.Second // heartbeats, and the sweep's grace
	simTimeout  = time.Second     // Options.Timeout
	simCommit   = 4 * time.Second // Options.CommitTimeout
	simBatch    = 8               // messages in one atomic batch: wide transactions are common
	simWindow   = 6               // a shared consumer's window: windows move on and differ
)

var simTopics = []struct {
	name  string
	parts int
}{{"t", 3}, {"u", 2}}

// simQuiet is a topic only some staged transactions write: its
// partitions stay untouched while a gateway is stopped, so a commit
// planned before the stop can still land after it (as on a real cluster
// with quiet partitions).
const simQuiet = "q"

// allSimTopics is every topic of a schedule.
func allSimTopics() []struct {
	name  string
	parts int
} {
	return append(append(simTopics[:0:0], simTopics...), struct {
		name  string
		parts int
	}{simQuiet, 4})
}

// simCrash unwinds a crashed gateway's goroutine.
type simCrash struct{}

// simCallKind is what a gateway asks the scheduler.
type simCallKind uint8

const (
	callBatch simCallKind = iota + 1
	callPublish
	callPublishAll
	callGet
	callPurge
	callDelete
	callWaitApplied
	callWaitAdvance
	callSync
	callLast
)

func (k simCallKind) String() string {
	return [...]string{"", "batch", "publish", "publishAll", "get", "purge", "delete", "waitApplied", "waitAdvance", "sync", "last"}[k]
}

type simCall struct {
	kind    simCallKind
	msgs    []*nats.Msg
	seq     uint64 // get, delete, waitApplied (the sequence), waitAdvance (from), sync (the target)
	subject string
	reply   chan simReply
}

type simReply struct {
	last  uint64 // batch, publish: the last sequence
	seqs  []uint64
	data  []byte
	h     nats.Header // last: the message's headers
	err   error
	crash bool
}

// parkEv is a gateway's goroutine stopping: at a call, at the end of a
// job, or on a panic.
type parkEv struct {
	g     *simGW
	call  *simCall
	done  bool
	crash bool
	panic any
}

// simGW is one simulated gateway.
type simGW struct {
	m    *sim
	name string
	s    *Store
	// digests are the fold's digests (fold.State.Digest) at every 7th sequence
	// it applied (verifyDigests).
	digests map[uint64]string
	jobs    chan func()
	call    *simCall
	busy    bool
	dead    bool
	// beat is when its heartbeat was last published.
	beat time.Time
	// pausedUntil: stopped until then.
	pausedUntil time.Time
	// job are the client requests of the job it runs (a crash leaves
	// their outcome unknown).
	job []*simReq
}

// simIO is a simulated gateway's clusterIO: every call goes to the
// scheduler.
type simIO struct{ g *simGW }

func (io simIO) ask(c *simCall) simReply {
	c.reply = make(chan simReply, 1)
	io.g.m.parked <- parkEv{g: io.g, call: c}
	r := <-c.reply
	if r.crash {
		panic(simCrash{})
	}
	return r
}

func (io simIO) now() time.Time { return io.g.m.now }

func (io simIO) publishBatch(_ context.Context, msgs []*nats.Msg) (*jsext.BatchAck, error) {
	r := io.ask(&simCall{kind: callBatch, msgs: msgs})
	if r.err != nil {
		return nil, r.err
	}
	return &jsext.BatchAck{Sequence: r.last, Count: len(msgs)}, nil
}

func (io simIO) publish(_ context.Context, m *nats.Msg) (uint64, error) {
	r := io.ask(&simCall{kind: callPublish, msgs: []*nats.Msg{m}})
	return r.last, r.err
}

func (io simIO) publishAll(_ context.Context, msgs []*nats.Msg) ([]uint64, error) {
	r := io.ask(&simCall{kind: callPublishAll, msgs: msgs})
	return r.seqs, r.err
}

// getRecord asks once where a gateway asks until the store's timeout: a
// read that fails fails its caller (an acquire), which is what the
// schedule checks.
func (io simIO) getRecord(ctx context.Context, seq uint64) ([]byte, error) {
	return io.getMsg(ctx, seq)
}

func (io simIO) getMsg(_ context.Context, seq uint64) ([]byte, error) {
	r := io.ask(&simCall{kind: callGet, seq: seq})
	return r.data, r.err
}

func (io simIO) purge(_ context.Context, subject string, below uint64) error {
	return io.ask(&simCall{kind: callPurge, subject: subject, seq: below}).err
}

func (io simIO) lastFor(_ context.Context, subject string) (uint64, nats.Header, error) {
	r := io.ask(&simCall{kind: callLast, subject: subject})
	return r.last, r.h, r.err
}

func (io simIO) lastOnLeader(ctx context.Context, subject string) (uint64, nats.Header, []byte, error) {
	seq, h, err := io.lastFor(ctx, subject)
	if err != nil || seq == 0 {
		return seq, h, nil, err
	}
	data, err := io.getMsg(ctx, seq)
	return seq, h, data, err
}

func (io simIO) deleteMsg(_ context.Context, seq uint64) error {
	return io.ask(&simCall{kind: callDelete, seq: seq}).err
}

func (io simIO) waitApplied(_ context.Context, seq uint64) error {
	return io.ask(&simCall{kind: callWaitApplied, seq: seq}).err
}

func (io simIO) waitAdvance(from uint64, _ time.Duration) {
	io.ask(&simCall{kind: callWaitAdvance, seq: from})
}

func (io simIO) sync(context.Context) error {
	return io.ask(&simCall{kind: callSync, seq: io.g.m.st.lastSeq()}).err
}

// sim is one schedule.
type sim struct {
	t      *testing.T
	seed   uint64
	rng    *rand.Rand
	now    time.Time
	st     *simStream
	gws    []*simGW
	parked chan parkEv
	faults bool
	nextGW uint64
	trace  []string
	steps  int
	w      simWorld
	err    error
	// counters for the summary
	crashes, lostAcks, late, dropped, stalls, outages, pauses int
	// outageEnd: until then the stream has no leader.
	outageEnd time.Time
	full      bool // keep the whole trace (a replayed seed)
	// snaps are snapshots of gateways' folds taken during maintenance
	// (jetstream/snapshot); verify starts a fold from each.
	snaps []simSnap
}

// simSnap is one gateway's snapshot encoding at its applied sequence.
type simSnap struct {
	gw   string
	seq  uint64
	data []byte
}

// joinsStaged reports whether a batch has a record joining staged chunks
// by reference.
func joinsStaged(msgs []*nats.Msg) bool {
	for _, msg := range msgs {
		if v := msg.Header.Get(fold.HRec); v != "" && !strings.HasSuffix(v, " 0") {
			return true
		}
	}
	return false
}

// quietOnly reports whether a batch writes partitions of the quiet topic
// only (and producers, markers).
func quietOnly(msgs []*nats.Msg) bool {
	for _, msg := range msgs {
		if strings.HasPrefix(msg.Subject, "tg.o.") || strings.HasPrefix(msg.Subject, "tg.d.") && !strings.HasPrefix(msg.Subject, "tg.d.3.") {
			return false
		}
	}
	return true
}

// paused reports whether g is stopped now.
func (m *sim) paused(g *simGW) bool { return m.now.Before(g.pausedUntil) }

// out reports whether the stream has no leader now.
func (m *sim) out() bool { return m.faults && m.now.Before(m.outageEnd) }

func newSim(t *testing.T, seed uint64) *sim {
	m := &sim{t: t, seed: seed, rng: rand.New(rand.NewPCG(seed, 0x5eed)), now: time.Unix(1_800_000_000, 0).UTC(),
		st: newSimStream(), parked: make(chan parkEv), faults: true}
	m.w.init()
	for _, tp := range simTopics {
		m.createTopic(tp.name, tp.parts)
	}
	m.createTopic(simQuiet, 4)
	for range simGateways {
		m.startGateway()
	}
	return m
}

// logf adds a line to the trace kept for a failing seed (the last 400).
func (m *sim) logf(format string, args ...any) {
	m.trace = append(m.trace, fmt.Sprintf("%6d %s ", m.steps, m.now.Format("15:04:05.000"))+fmt.Sprintf(format, args...))
	if len(m.trace) > 400 && !m.full {
		m.trace = m.trace[len(m.trace)-400:]
	}
}

// createTopic stores a topic's catalog record as CreateTopic would.
func (m *sim) createTopic(name string, parts int) {
	cfg := topicstore.TopicConfig{Name: name, MinActivePartitions: parts,
		Consumers: simConsumers(name)}
	if err := topicstore.NormalizeConfig(&cfg); err != nil {
		panic(err)
	}
	js, err := json.Marshal(fold.CatalogRec{Config: cfg, CreatedAt: m.now.UnixMicro(), Layout: topicstore.FlatLayout(parts)})
	if err != nil {
		panic(err)
	}
	msg := nats.NewMsg("tg.c." + hex.EncodeToString([]byte(name)))
	msg.Header.Set(fold.HTopic, string(js))
	m.st.store([]*nats.Msg{msg}, m.now)
}

func (m *sim) opts() Options {
	return Options{Stream: DefaultStream, Clock: func() time.Time { return m.now }, Timeout: simTimeout,
		CommitTimeout: simCommit, ProducerExpiry: time.Hour, CacheBytes: -1, GroupTTL: simTTL}.withDefaults()
}

// startGateway starts a gateway and replays the stream into its fold, as
// Open does.
func (m *sim) startGateway() *simGW {
	m.nextGW++
	id := 0x1000 + m.nextGW
	g := &simGW{m: m, jobs: make(chan func(), 1)}
	g.s = newStore(m.opts(), id)
	g.digests = map[uint64]string{}
	g.s.onApplied = func(seq uint64) {
		if seq%7 == 0 {
			g.digests[seq] = strconv.FormatUint(g.s.fold.Digest(time.Time{}), 16)
		}
	}
	g.s.io = simIO{g}
	// The newest snapshot is the one a gateway starts from
	// (verifySnapshots checks those a retirement left usable), and no
	// decision is retired that a live gateway has not folded.
	g.s.retire.SetFloors(func() uint64 {
		if len(m.snaps) == 0 {
			return math.MaxUint64
		}
		return m.snaps[len(m.snaps)-1].seq
	}, func() uint64 {
		floor := uint64(math.MaxUint64)
		for _, o := range m.live() {
			floor = min(floor, o.s.applied)
		}
		return floor
	})
	g.s.maxBatch = simBatch
	g.s.shWin = simWindow
	g.name = g.s.stage.gw
	m.gws = append(m.gws, g)
	m.heartbeat(g)
	for m.deliver(g) {
	}
	go g.loop()
	m.logf("gateway %s starts at %d", g.name, g.s.applied)
	return g
}

// loop runs g's jobs until it crashes.
func (g *simGW) loop() {
	for job := range g.jobs {
		ev := parkEv{g: g, done: true}
		func() {
			defer func() {
				if r := recover(); r != nil {
					if _, ok := r.(simCrash); ok {
						ev.crash = true
						return
					}
					ev.panic = fmt.Sprintf("%v\n%s", r, stack())
				}
			}()
			job()
		}()
		g.m.parked <- ev
		if ev.crash {
			return
		}
	}
}

// heartbeat publishes g's heartbeat, as groups.Groups.Loop does.
func (m *sim) heartbeat(g *simGW) {
	msg := nats.NewMsg("tg.h." + g.name)
	msg.Header.Set(fold.HUntil, strconv.FormatInt(m.now.Add(simTTL).UnixMicro(), 10))
	m.st.store([]*nats.Msg{msg}, m.now)
	g.beat = m.now
}

// deliver folds the next message g's ordered consumer would deliver; it
// reports whether there was one.
func (m *sim) deliver(g *simGW) bool {
	for seq := g.s.applied + 1; seq <= m.st.lastSeq(); seq++ {
		if msg := m.st.get(seq); msg != nil {
			g.s.foldAt(seq, msg.subject, msg.h, msg.ts, false)
			return true
		}
	}
	return false
}

// behind reports whether g's fold lacks a live message.
func (m *sim) behind(g *simGW) bool {
	for seq := g.s.applied + 1; seq <= m.st.lastSeq(); seq++ {
		if m.st.get(seq) != nil {
			return true
		}
	}
	return false
}

func (m *sim) live() []*simGW {
	var out []*simGW
	for _, g := range m.gws {
		if !g.dead {
			out = append(out, g)
		}
	}
	return out
}

// wait blocks until the gateway that was let run parks, and records it.
func (m *sim) wait() {
	ev := <-m.parked
	g := ev.g
	switch {
	case ev.panic != nil:
		m.fail(fmt.Errorf("gateway %s panicked: %v", g.name, ev.panic))
		g.busy, g.dead = false, true
	case ev.call != nil:
		g.call = ev.call
	case ev.crash:
		m.crashed(g)
	case ev.done:
		g.busy, g.call, g.job = false, nil, nil
	}
}

func (m *sim) fail(err error) {
	if m.err == nil {
		m.err = err
		m.logf("FAIL: %v", err)
	}
}

// crashed records a gateway that died: its requests' outcomes are unknown
// to their clients.
func (m *sim) crashed(g *simGW) {
	m.crashes++
	m.logf("gateway %s crashed", g.name)
	g.dead, g.busy, g.call = true, false, nil
	for _, r := range g.job {
		if !r.answered {
			m.w.settle(r, topicstore.ErrOutcomeUnknown, topicstore.CommitResult{})
			r.crashed = true
			m.w.crashedReqs++
		}
	}
	g.job = nil
	close(g.jobs)
}

// run runs steps steps, then settles everything and checks the
// invariants.
func (m *sim) run(steps int) error {
	for m.steps = 0; m.steps < steps && m.err == nil; m.steps++ {
		m.step()
	}
	if m.err == nil {
		m.quiesce()
	}
	if m.err == nil {
		m.aftermath()
	}
	if m.err == nil {
		m.verify()
	}
	m.stop()
	return m.err
}

// stop ends every gateway goroutine.
func (m *sim) stop() {
	for _, g := range m.gws {
		if g.dead {
			continue
		}
		if g.call != nil {
			c := g.call
			g.call = nil
			c.reply <- simReply{crash: true}
			m.wait()
		} else if !g.busy {
			g.dead = true
			close(g.jobs)
		}
	}
}

type simAction struct {
	w  int
	do func()
}

// step advances the clock and takes one action, drawn by weight.
func (m *sim) step() {
	m.now = m.now.Add(time.Duration(1+m.rng.IntN(8)) * time.Millisecond)
	var acts []simAction
	add := func(w int, f func()) {
		if w > 0 {
			acts = append(acts, simAction{w, f})
		}
	}
	live := m.live()
	for _, g := range live {
		if m.now.Sub(g.beat) >= simTTL/5 && !m.paused(g) {
			m.heartbeat(g)
		}
	}
	for _, g := range live {
		if m.paused(g) {
			continue // stopped (SIGSTOP): it neither runs, nor folds, nor beats
		}
		switch {
		case g.call != nil:
			add(12, func() { m.answer(g) })
		case !g.busy:
			add(4, func() { m.startJob(g) })
		}
		if m.behind(g) {
			add(8, func() { m.deliver(g) })
		}
	}
	for i := range m.st.inflight {
		if m.out() {
			break
		}
		add(4, func() { m.land(i) })
		if m.faults {
			add(1, func() { m.drop(i) })
		}
	}
	if len(live) < simGateways {
		add(2, func() { m.startGateway() })
	}
	if m.faults && m.rng.IntN(600) == 0 {
		// A gateway dies at the call it is making.
		var at []*simGW
		for _, g := range live {
			if g.call != nil {
				at = append(at, g)
			}
		}
		if len(at) > 0 {
			g := at[m.rng.IntN(len(at))]
			add(1<<20, func() { m.crash(g) })
		}
	}
	if m.faults && m.rng.IntN(600) == 0 && len(live) > 1 {
		// A gateway stops (SIGSTOP) for up to four heartbeat TTLs: the
		// others may take it for dead, abort its wide transactions and
		// sweep its stagings, and it must not undo that when it wakes.
		// Mostly a gateway in the middle of a call: its batch is built
		// on what its fold knew before the others took it for dead.
		g := live[m.rng.IntN(len(live))]
		for _, x := range live {
			if x.call != nil && (x.call.kind == callBatch || x.call.kind == callPublish) && m.rng.IntN(2) == 0 {
				g = x
			}
		}
		for _, x := range live {
			if x.call != nil && x.call.kind == callBatch && joinsStaged(x.call.msgs) && m.rng.IntN(3) > 0 {
				g = x // a commit joining staged chunks: the sweep's race
			}
		}
		for _, x := range live {
			if x.call != nil && x.call.kind == callBatch && joinsStaged(x.call.msgs) && quietOnly(x.call.msgs) {
				g = x // one no other commit will refuse
			}
		}
		g.pausedUntil = m.now.Add(time.Duration(m.rng.Int64N(int64(4 * simTTL))))
		m.pauses++
		m.logf("gateway %s stopped until %s", g.name, g.pausedUntil.Format("15:04:05.000"))
	}
	if m.faults && m.now.After(m.outageEnd) && m.rng.IntN(1500) == 0 {
		// The stream's leader stops (SIGSTOP): nothing is stored, asked or
		// purged until it comes back or another is elected.
		m.outageEnd = m.now.Add(time.Duration(500+m.rng.IntN(6000)) * time.Millisecond)
		m.outages++
		m.logf("outage until %s", m.outageEnd.Format("15:04:05.000"))
	}
	if len(acts) == 0 {
		return
	}
	total := 0
	for _, a := range acts {
		total += a.w
	}
	n := m.rng.IntN(total)
	for _, a := range acts {
		if n < a.w {
			a.do()
			return
		}
		n -= a.w
	}
}

// crash kills g at its pending call.
func (m *sim) crash(g *simGW) {
	c := g.call
	g.call = nil
	m.logf("crash %s at its %s", g.name, c.kind)
	c.reply <- simReply{crash: true}
	m.wait()
}

// land stores proposal i; drop loses it.
func (m *sim) land(i int) {
	p := m.st.inflight[i]
	m.st.inflight = append(m.st.inflight[:i], m.st.inflight[i+1:]...)
	last := m.st.store(p.msgs, m.now)
	m.late++
	m.logf("late proposal of %d stored at %d (%s)", len(p.msgs), last, p.msgs[0].Subject)
}

func (m *sim) drop(i int) {
	p := m.st.inflight[i]
	m.st.inflight = append(m.st.inflight[:i], m.st.inflight[i+1:]...)
	m.dropped++
	m.logf("proposal of %d lost (%s)", len(p.msgs), p.msgs[0].Subject)
}

var (
	errSimTimeout  = fmt.Errorf("sim: %w", context.DeadlineExceeded)
	errSimNotFound = fmt.Errorf("sim: %w", natsjs.ErrMsgNotFound)
)

// chance is true with probability pct percent while faults are on.
func (m *sim) chance(pct int) bool { return m.faults && m.rng.IntN(100) < pct }

// answer answers g's pending call.
func (m *sim) answer(g *simGW) {
	c := g.call
	var r simReply
	switch c.kind {
	case callBatch, callPublish:
		r = m.publish(g, c)
	case callPublishAll:
		for _, msg := range c.msgs {
			one := m.publish(g, &simCall{kind: callPublish, msgs: []*nats.Msg{msg}})
			if one.err != nil {
				r.err = one.err
				break
			}
			r.seqs = append(r.seqs, one.last)
		}
	case callGet:
		switch msg := m.st.get(c.seq); {
		case m.out() && m.rng.IntN(2) == 0:
			r.err = errSimTimeout
		case msg == nil:
			r.err = errSimNotFound
		case m.chance(10):
			r.err = errSimNotFound // a lagging replica answered
		default:
			r.data = msg.data
		}
	case callLast:
		if m.out() {
			r.err = errSimTimeout
			break
		}
		if msg := m.st.get(m.st.last[c.subject]); msg != nil {
			r.last, r.h = m.st.last[c.subject], msg.h
		}
	case callPurge, callDelete:
		if m.out() {
			r.err = errSimTimeout
			break
		}
		applied := !m.chance(5)
		if applied {
			if c.kind == callPurge {
				m.st.purge(c.subject, c.seq)
			} else {
				m.st.deleteMsg(c.seq)
			}
		}
		if !applied || m.chance(5) {
			r.err = errSimTimeout // not done, or done and the answer lost
		}
	case callWaitApplied, callSync:
		switch {
		case c.kind == callSync && m.out():
			r.err = fmt.Errorf("%w: sim: no leader to ask", topicstore.ErrUnavailable)
		case g.s.applied >= c.seq:
		case m.chance(15) || !m.behind(g):
			m.stalls++
			r.err = fmt.Errorf("%w: sim: the fold did not reach %d", topicstore.ErrUnavailable, c.seq)
		default:
			m.deliver(g) // not yet: fold one more, keep waiting
			return
		}
	case callWaitAdvance:
	}
	g.call = nil
	if c.kind != callWaitAdvance {
		m.logf("%s %s -> last %d seqs %v err %v", g.name, callString(c), r.last, r.seqs, r.err)
	}
	c.reply <- r
	m.wait()
}

func callString(c *simCall) string {
	switch c.kind {
	case callBatch, callPublish, callPublishAll:
		subj := make([]string, 0, len(c.msgs))
		for _, msg := range c.msgs {
			subj = append(subj, strings.TrimPrefix(msg.Subject, "tg."))
		}
		return fmt.Sprintf("%s %v", c.kind, subj)
	case callPurge:
		return fmt.Sprintf("purge %s below %d", c.subject, c.seq)
	}
	return fmt.Sprintf("%s %d", c.kind, c.seq)
}

// publish decides a batch or a single publish.
func (m *sim) publish(g *simGW, c *simCall) simReply {
	batch := c.kind == callBatch
	if m.out() {
		switch m.rng.IntN(10) {
		case 0:
			// The leader took the commit before it stopped: it may be
			// stored once it is back.
			if m.st.check(c.msgs) == nil {
				m.st.inflight = append(m.st.inflight, &simProposal{msgs: cloneMsgs(c.msgs), at: m.now})
			}
			return simReply{err: errSimTimeout}
		case 1, 2:
			return simReply{err: fmt.Errorf("sim: %w", nats.ErrNoResponders)}
		}
		return simReply{err: errSimTimeout}
	}
	switch {
	case m.chance(3):
		if batch {
			return simReply{err: fmt.Errorf("sim: %w: %w", jsext.ErrBatchNotSent, nats.ErrConnectionClosed)}
		}
		return simReply{err: fmt.Errorf("sim: %w", natsjs.ErrNoStreamResponse)}
	case m.chance(3):
		return simReply{err: fmt.Errorf("sim: %w", nats.ErrNoResponders)}
	}
	if err := m.st.check(c.msgs); err != nil {
		if m.chance(10) {
			return simReply{err: errSimTimeout} // the refusal was lost
		}
		return simReply{err: err}
	}
	switch {
	case batch && m.chance(3):
		// A leader change lost the open batch.
		return simReply{err: simAPIError(jsext.ErrCodeBatchIncomplete, "atomic publish batch is incomplete")}
	case m.chance(8):
		m.st.inflight = append(m.st.inflight, &simProposal{msgs: cloneMsgs(c.msgs), at: m.now})
		m.logf("%s: proposal in flight", g.name)
		return simReply{err: errSimTimeout}
	case m.chance(6):
		last := m.st.store(c.msgs, m.now)
		m.lostAcks++
		m.logf("%s: stored at %d, ack lost", g.name, last)
		return simReply{err: errSimTimeout}
	}
	return simReply{last: m.st.store(c.msgs, m.now)}
}

func cloneMsgs(msgs []*nats.Msg) []*nats.Msg {
	out := make([]*nats.Msg, len(msgs))
	for i, msg := range msgs {
		c := nats.NewMsg(msg.Subject)
		for k, v := range msg.Header {
			c.Header[k] = append([]string(nil), v...)
		}
		c.Data = append([]byte(nil), msg.Data...)
		out[i] = c
	}
	return out
}

// quiesce stops the faults and lets everything settle: proposals land,
// every gateway finishes its job and folds the stream, the doubts and
// wide transactions of the living are settled, and, a TTL later, the dead
// gateways' wide transactions are aborted and their stagings swept.
func (m *sim) quiesce() {
	m.faults = false
	for _, g := range m.gws {
		g.pausedUntil = time.Time{}
	}
	for len(m.st.inflight) > 0 {
		m.land(0)
	}
	if len(m.live()) == 0 {
		m.startGateway()
	}
	m.drain()
	for _, g := range m.live() {
		m.runJob(g, func() {
			g.s.chain.Settle(context.Background(), true)
			g.s.wide.Settle(context.Background())
		})
	}
	m.now = m.now.Add(2 * simTTL)
	for _, g := range m.live() {
		m.heartbeat(g)
	}
	if live := m.live(); len(live) > 0 {
		g := live[0]
		m.runJob(g, func() {
			g.s.wide.AbortDead()
			if _, err := g.s.maint.Sweep(context.Background()); err != nil {
				m.fail(fmt.Errorf("sweep: %w", err))
			}
		})
	}
	for _, g := range m.live() {
		m.runJob(g, func() {
			g.s.chain.Settle(context.Background(), true)
			g.s.wide.Settle(context.Background())
		})
	}
	m.drain()
	if live := m.live(); len(live) > 0 {
		g := live[0]
		m.runJob(g, func() {
			if _, err := g.s.retire.Run(context.Background(), g.s.io.now().Add(g.s.opts.DecisionHold)); err != nil {
				m.logf("%s: retiring decisions: %v", g.name, err)
			}
		})
	}
}

// drain answers every call until every gateway is idle and folded up.
func (m *sim) drain() {
	for i := 0; m.err == nil; i++ {
		if i > 200000 {
			m.fail(errors.New("the gateways did not settle"))
			return
		}
		m.now = m.now.Add(time.Millisecond)
		progressed := false
		for _, g := range m.live() {
			if m.paused(g) {
				continue
			}
			if g.call != nil {
				m.answer(g)
				progressed = true
			} else if m.behind(g) {
				m.deliver(g)
				progressed = true
			}
		}
		if !progressed {
			return
		}
	}
}

// runJob runs f on g and drains.
func (m *sim) runJob(g *simGW, f func()) {
	if g.dead || m.err != nil {
		return
	}
	m.drain()
	if g.dead || g.busy {
		return
	}
	g.busy = true
	g.jobs <- f
	m.wait()
	m.drain()
}

func stack() string {
	b := make([]byte, 16<<10)
	return string(b[:runtime.Stack(b, false)])
}

// simStats sums what the schedules did.
type simStats struct {
	schedules, crashes, lostAcks, late, dropped, stalls, outages, pauses    int
	acked, unknown, failed, wide, wideAcked, staged, stagedAcked, doubtSeen int
	crashedReqs, fences, foreignAborts, aborts, resolutions, retired        int
	acquires, hands, shAcks, releases                                       int
}

func (s *simStats) add(m *sim) {
	s.schedules++
	s.crashes += m.crashes
	s.lostAcks += m.lostAcks
	s.late += m.late
	s.dropped += m.dropped
	s.stalls += m.stalls
	s.outages += m.outages
	s.pauses += m.pauses
	s.acked += m.w.n[simAcked]
	s.unknown += m.w.n[simUnknown] - m.w.crashedReqs
	s.crashedReqs += m.w.crashedReqs
	s.failed += m.w.n[simFailed]
	s.wide += m.w.wides
	s.wideAcked += m.w.widesAcked
	s.staged += m.w.stagedTxns
	s.stagedAcked += m.w.stagedAcked
	s.acquires += m.w.sh.acquires
	s.hands += m.w.sh.hands
	s.shAcks += m.w.sh.acks
	s.releases += m.w.sh.releases
	for _, g := range m.gws {
		s.doubtSeen += int(g.s.chain.Doubted())
		s.retired += int(g.s.retire.Retired())
	}
	for _, msg := range m.st.msgs {
		switch {
		case msg.h.Get(fold.HFence) != "":
			s.fences++
		case msg.h.Get(fold.HAbort) != "":
			s.foreignAborts++
		case msg.h.Get(fold.HDecide) == "abort":
			s.aborts++
		case msg.h.Get(fold.HResolve) != "":
			s.resolutions++
		}
	}
}

func (s simStats) String() string {
	return fmt.Sprintf("requests %d acknowledged, %d answered unknown (08007), %d lost with their gateway, %d refused; %d wide (%d acknowledged), %d staged (%d acknowledged); %d batches in doubt, %d resolutions; %d wide aborts (%d by another gateway), %d decisions retired, %d sweep fences; shared consumer: %d acquires, %d messages handed out, %d acknowledgements confirmed, %d acks or releases asked; faults: %d crashes, %d acks lost, %d late proposals, %d lost proposals, %d fold stalls, %d outages, %d gateways stopped",
		s.acked, s.unknown, s.crashedReqs, s.failed, s.wide, s.wideAcked, s.staged, s.stagedAcked, s.doubtSeen, s.resolutions, s.aborts, s.foreignAborts, s.retired, s.fences, s.acquires, s.hands, s.shAcks, s.releases, s.crashes, s.lostAcks, s.late, s.dropped, s.stalls, s.outages, s.pauses)
}
