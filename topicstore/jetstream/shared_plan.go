package jetstream

import (
	"topicgate/topicstore/jetstream/fold"

	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"

	"topicgate/topicstore"
	"topicgate/topicstore/sharedcore"
)

// Shared consumers on the cluster: steps in the committer's plan.
//
// Every SharedStore call, and every acknowledgement in a commit, is a step
// (shStep) that the committer plans with the group it arrives in (commit.go
// calls newSharedPlan, step and messages): under s.mu, each (topic,
// consumer) the group touches gets a sharedcore.Core rebuilt from the
// fold's state and the gateway's metadata cache (shSim), lock expiry
// applied as of the plan's clock; the group's steps run on it in order,
// exactly as the embedded store runs them on its in-memory core; then each
// partition whose encoded state changed gets one state message,
// conditional on its subject's last sequence, in the group's atomic batch.
// So a lock is decided by the cluster: a batch planned on a state that
// another gateway changed meanwhile is refused whole and planned again
// from the caught-up fold (runGroup), and the outcomes a caller gets are
// those of the batch that committed. Acks in a commit are checked (held,
// unexpired) before anything of the commit is planned, and ride in the
// commit's own batch: they commit with its writes and positions or not at
// all.
//
// Why in the committer, rather than each call publishing its partition's
// new state on its own and retrying when refused: a gateway must never
// have two expectations on one subject in flight (the server refuses the
// second, 10164, without checking it), so the sessions of one gateway
// working one consumer would queue behind each other's round trips
// anyway; in the committer's group they share one batch and one state
// message per partition (group commit), acks in a commit need the
// commit's batch, and a dead-letter copy is a write the committer already
// knows how to route and deduplicate. The cost: a shared step waits for
// the group in flight, commits included.
//
// What a core sees of a partition is the window its gateway's metadata
// cache has loaded (sharedFill runs before each step); durable entries of
// messages beyond it (another gateway loaded further) are carried over
// unchanged, neither handed out nor expired by this plan, and with
// keep_messages_order do not hold their groups here (a window is a whole
// sharedcore.DefaultWindow as soon as the cache catches up).
//
// Dead-letter moves ride in the same batch too: the message's copy is a
// write to the dead_letter_queue (same stream), with the producer
// "dlq/<topic>/<consumer>/<partition>/<offset>" and seqno 1 as in the
// embedded store, and the message is archived by the state message next
// to it. The plan cannot read a message's body (no I/O under s.mu), so a
// step whose move lacks it is taken back and refused with needBodiesError;
// its caller reads the messages and sends the step again (SharedAction
// reads them beforehand when its action may move). A move that the
// plan's lock expiry starts without the body is taken back too: the lock
// stays as it was, past its deadline (its holder hears OutcomeExpired,
// nobody else may take it) until the caller, told so by sim.limbo, reads
// the bodies and sends a step that finishes the move. A move
// whose queue does not exist (or takes no codec of the message) fails as
// in the embedded store: the message goes back to the queue, the failure
// is counted with its reason.

type shKind uint8

const (
	stAcquire   shKind = iota + 1 // Pick
	stAct                         // SharedAction
	stRelease                     // ReleaseSession
	stUndeliver                   // ReleaseUndelivered
	stStats                       // SharedStats; also finishes moves (limbo)
	stAck                         // an acknowledgement in a commit
)

// shStep is one shared-consumer step; out is set by the plan that last
// ran it (read by the caller once its request is settled).
type shStep struct {
	kind            shKind
	topic, consumer string
	holder          sharedcore.Holder
	max             int           // stAcquire
	timeout         time.Duration // stAcquire
	maxBytes        int64         // stAcquire
	watch           bool          // stAcquire
	action          topicstore.SharedAction
	refs            []topicstore.MsgRef // stAct, stRelease (nil: all), stUndeliver, stAck
	until           time.Time           // stAct (ActionExtend)
	bodies          map[bodyKey]*shBody // messages read for dead-letter moves
	out             shOut
}

type shOut struct {
	picked    []shPicked
	until     time.Time
	outcomes  []topicstore.SharedOutcome
	stats     []topicstore.SharedPartitionStats
	published <-chan struct{}
	freed     <-chan struct{}
	nextReady time.Duration
	limbo     []topicstore.MsgRef // expired locks whose dead-letter move waits for their bodies
}

type shPicked struct {
	ref   topicstore.MsgRef
	deliv int32
}

// bodyKey names a message read for a dead-letter move.
type bodyKey struct {
	topic uint64
	part  int32
	off   int64
}

type shBody struct {
	msg topicstore.Message // stored body, codec
	err error              // not readable
}

// needBodiesError refuses a step whose dead-letter moves need the bodies
// of refs.
type needBodiesError struct{ refs []topicstore.MsgRef }

func (e *needBodiesError) Error() string {
	return fmt.Sprintf("dead-letter moves need %d messages read", len(e.refs))
}

// sharedPlan is the shared-consumer part of one plan of a group.
type sharedPlan struct {
	s      *Store
	sims   map[simKey]*shSim
	order  []*shSim
	bodies map[bodyKey]*shBody
	msgs   int // state messages the plan may add (a bound, for maxGroupMsgs)
}

type simKey struct {
	topic    uint64
	consumer string
}

// shSim is one (topic, consumer)'s core during a plan.
type shSim struct {
	t      *fold.Topic
	name   string
	cc     *topicstore.ConsumerConfig
	c      shConsumer
	core   *sharedcore.Core
	extra  [][]fold.SharedEntry // per partition: durable entries beyond the loaded window, kept as they are
	cnt    []fold.SharedCounts
	orig   []string // per partition: the state as the fold has it, encoded
	start0 []int64  // per partition: the start as built
	full   []bool   // per partition: the window held a whole window of messages (shWindow)
	limbo  []topicstore.MsgRef
	moved  []pendingWrite // dead-letter copies decided and not yet handed to a request
	used   bool           // a step ran on it
}

// newSharedPlan starts the shared-consumer part of a plan of group (a
// committer hook); it runs under s.mu.
func (s *Store) newSharedPlan(group []*commitReq) *sharedPlan {
	sp := &sharedPlan{s: s, sims: map[simKey]*shSim{}}
	for _, r := range group {
		for _, st := range r.sh {
			for k, b := range st.bodies {
				if sp.bodies == nil {
					sp.bodies = map[bodyKey]*shBody{}
				}
				sp.bodies[k] = b
			}
		}
	}
	return sp
}

// sim returns the plan's core of (topic, consumer), built on first use.
func (sp *sharedPlan) sim(topic, consumer string, now time.Time) (*shSim, error) {
	s := sp.s
	t, cc, c, err := s.sharedLookup(topic, consumer)
	if err != nil {
		return nil, err
	}
	k := simKey{t.Rec.ID, consumer}
	if sim := sp.sims[k]; sim != nil {
		return sim, nil
	}
	n := len(t.Parts)
	sim := &shSim{t: t, name: consumer, cc: cc, c: c, extra: make([][]fold.SharedEntry, n), cnt: make([]fold.SharedCounts, n),
		orig: make([]string, n), start0: make([]int64, n), full: make([]bool, n)}
	window := s.shWindow()
	core := &sharedcore.Core{Cfg: sharedcore.NewConfig(cc), Window: int(window), Parts: make([]*sharedcore.Part, n), RR: c.rr % max(n, 1)}
	core.Tree = sharedcore.Tree{Parent: make([]int32, n), End: func(p int32) int64 { return t.Parts[p].End }}
	for i := range n {
		p := int32(i)
		core.Tree.Parent[i] = -1
		if i < len(t.Rec.Layout.Parts) && t.Rec.Layout.Parts[i].Parent >= 0 {
			core.Tree.Parent[i], core.Tree.Split = t.Rec.Layout.Parts[i].Parent, true
		}
		st, start := s.sharedState(t, consumer, c, p)
		if st != nil {
			sim.orig[i], sim.cnt[i] = c.Parts[p].Raw, st.Cnt
		} else {
			sim.orig[i] = (&fold.SharedState{Start: start}).Encode()
		}
		end := start // the loaded window: what the cache has from start on
		if m := c.meta[p]; m != nil && m.base <= start {
			end = max(start, min(start+window, t.Parts[p].End, m.end()))
		}
		part := &sharedcore.Part{Start: start, Ents: c.entries(p, int(end-start))}
		if end > start {
			m := c.meta[p]
			for j := range part.Ents {
				me := &m.ents[start-m.base+int64(j)]
				part.Ents[j] = sharedcore.Entry{Written: me.written, Delay: me.delay, Group: me.group}
			}
		}
		if st != nil {
			for _, d := range st.Ents {
				switch {
				case d.Off < start:
				case d.Off >= end:
					sim.extra[i] = append(sim.extra[i], d)
				default:
					e := &part.Ents[d.Off-start]
					e.State, e.Expired, e.Deliveries = d.State, d.Expired, d.Deliv
					e.Holder, e.ExpHolder, e.Deadline = d.Holder, d.ExpHolder, d.Deadline
					if d.State == sharedcore.Acquired {
						core.NoteDeadline(d.Deadline)
					}
				}
			}
		}
		sim.start0[i], sim.full[i] = start, start+window < t.Parts[p].End
		core.Parts[i] = part
	}
	sim.core = core
	sim.expire(now, sp)
	sp.sims[k] = sim
	sp.order = append(sp.order, sim)
	sp.msgs += 2 * n // a state and a position message per partition, at most
	return sim, nil
}

// expire applies lock expiry as of now. A dead-letter move it starts
// without the message's body is taken back: the lock stays expired,
// unreleased, in limbo until the caller brings the body.
func (sim *shSim) expire(now time.Time, sp *sharedPlan) {
	var before map[topicstore.MsgRef]sharedcore.Entry
	if sim.core.Cfg.Policy == "move" {
		for pi, p := range sim.core.Parts {
			for i := range p.Ents {
				if e := &p.Ents[i]; e.State == sharedcore.Acquired && e.Deadline <= now.UnixNano() {
					if before == nil {
						before = map[topicstore.MsgRef]sharedcore.Entry{}
					}
					before[topicstore.MsgRef{Partition: int32(pi), Offset: p.Start + int64(i)}] = *e
				}
			}
		}
	}
	var eff sharedcore.Effects
	sim.core.Expire(now.UnixNano(), &eff)
	for _, r := range sim.effects(&eff, sp) {
		*sim.core.Parts[r.Partition].At(r.Offset) = before[r]
		sim.limbo = append(sim.limbo, r)
	}
}

// clone copies what a step may change, to take the step back.
func (sim *shSim) clone() *shSim {
	c := *sim
	c.core = sim.core.Clone()
	c.cnt = slices.Clone(sim.cnt)
	c.limbo = slices.Clone(sim.limbo)
	return &c
}

// step runs r's shared-consumer steps (a committer hook): it returns the
// writes to plan for r, its own plus the dead-letter moves of its steps,
// or the error that refuses r (its steps then changed nothing). It runs
// under s.mu.
func (sp *sharedPlan) step(r *commitReq, now time.Time) ([]pendingWrite, error) {
	if len(r.sh) == 0 {
		return r.writes, nil
	}
	// Acknowledgements in a commit: all held, or the commit fails.
	for _, st := range r.sh {
		if st.kind != stAck {
			continue
		}
		sim, err := sp.sim(st.topic, st.consumer, now)
		if err != nil {
			return nil, err
		}
		for _, ref := range st.refs {
			if !sim.core.Held(now.UnixNano(), st.holder, ref) {
				return nil, fmt.Errorf("%w: topic %q consumer %q partition %d offset %d session %d",
					topicstore.ErrLockExpired, st.topic, st.consumer, ref.Partition, ref.Offset, st.holder.Session)
			}
		}
	}
	writes := r.writes
	for _, st := range r.sh {
		sim, err := sp.sim(st.topic, st.consumer, now)
		if err != nil {
			return nil, err
		}
		var undo *shSim
		if sim.core.Cfg.Policy == "move" && (st.kind == stAct || st.kind == stRelease) {
			undo = sim.clone()
		}
		w, missing := sim.run(st, now, sp)
		if len(missing) > 0 {
			*sim = *undo
			return nil, &needBodiesError{refs: missing}
		}
		sim.used = true
		if len(w) > 0 {
			writes = append(writes[:len(writes):len(writes)], w...)
		}
	}
	return writes, nil
}

// run applies one step to the core and records its outcome in st.out. It
// returns the dead-letter writes, or the messages whose bodies it lacks.
func (sim *shSim) run(st *shStep, now time.Time, sp *sharedPlan) ([]pendingWrite, []topicstore.MsgRef) {
	c, ns := sim.core, now.UnixNano()
	st.out = shOut{limbo: sim.limbo}
	var eff sharedcore.Effects
	switch st.kind {
	case stAcquire:
		timeout := st.timeout
		if timeout <= 0 {
			timeout = c.Cfg.Timeout
		}
		st.out.until = now.Add(timeout)
		refs := c.Pick(ns, st.max, st.holder, st.out.until.UnixNano())
		if st.maxBytes > 0 { // keep the pick order's prefix that fits
			n, size := 0, int64(0)
			for n < len(refs) && (n == 0 || size+sim.size(refs[n]) <= st.maxBytes) {
				size += sim.size(refs[n])
				n++
			}
			for _, r := range refs[n:] {
				c.Unpick(r)
			}
			refs = refs[:n]
		}
		for _, r := range refs {
			st.out.picked = append(st.out.picked, shPicked{r, c.Parts[r.Partition].At(r.Offset).Deliveries})
		}
		if len(refs) == 0 && st.watch {
			st.out.published, st.out.freed = sim.t.Changed, sim.c.FreedChan()
			if next := c.NextReady(ns); next > 0 {
				st.out.nextReady = time.Duration(next - ns)
			}
		}
		sim.c.rr = c.RR
	case stAct:
		until := st.until
		if until.IsZero() { // ActionExtend without Until: by the consumer's timeout
			until = now.Add(c.Cfg.Timeout)
		}
		st.out.outcomes = make([]topicstore.SharedOutcome, len(st.refs))
		for i, r := range st.refs {
			if r.Partition < 0 || int(r.Partition) >= len(sim.t.Parts) || r.Offset < sim.t.Parts[r.Partition].Start ||
				r.Offset >= sim.t.Parts[r.Partition].End {
				st.out.outcomes[i] = topicstore.OutcomeUnknown
				continue
			}
			st.out.outcomes[i] = c.Act(ns, st.holder, st.action, r, until, &eff)
		}
	case stAck:
		for _, r := range st.refs {
			c.Act(ns, st.holder, topicstore.ActionAck, r, time.Time{}, &eff)
		}
	case stRelease:
		c.ReleaseSession(st.holder, st.refs, &eff)
	case stUndeliver:
		for _, r := range st.refs {
			c.Unacquire(st.holder, r)
		}
	case stStats:
		st.out.stats = make([]topicstore.SharedPartitionStats, len(c.Parts))
		for i, p := range c.Parts {
			p.Advance()
			st.out.stats[i] = c.Stats(i, ns)
			cnt := &sim.cnt[i]
			st.out.stats[i].ArchivedTotal, st.out.stats[i].DeadLettered = cnt.Archived, cnt.Moved
			st.out.stats[i].DeadLetterFailures, st.out.stats[i].DeadLetterError = cnt.Failures, cnt.LastErr
		}
	}
	if missing := sim.effects(&eff, sp); len(missing) > 0 {
		return nil, missing
	}
	w := sim.moved
	sim.moved = nil
	return w, nil
}

// size is a picked message's stored body size (from the metadata cache).
func (sim *shSim) size(r topicstore.MsgRef) int64 {
	m := sim.c.meta[r.Partition]
	return m.ents[r.Offset-m.base].size
}

// effects counts what a step finished and performs its dead-letter
// moves: a move whose message body is at hand becomes a write to the
// dead_letter_queue (sim.moved) and the message is archived; one whose
// queue is missing fails, the message back in the queue; one whose body
// is missing stays Pending and is returned.
func (sim *shSim) effects(eff *sharedcore.Effects, sp *sharedPlan) (missing []topicstore.MsgRef) {
	for _, f := range eff.Finished {
		if f.State == sharedcore.Archived {
			sim.cnt[f.Part].Archived++
		}
	}
	for _, mv := range eff.Moves {
		e := sim.core.Parts[mv.Part].At(mv.Off)
		w, err := sp.deadLetter(sim, mv)
		switch {
		case err == errNoBody:
			missing = append(missing, topicstore.MsgRef{Partition: mv.Part, Offset: mv.Off})
			continue
		case err != nil:
			e.State = sharedcore.Avail
			sim.core.Freed = true
			sim.cnt[mv.Part].Failures++
			sim.cnt[mv.Part].LastErr = err.Error()
		default:
			e.State = sharedcore.Archived
			sim.core.FinishedGroup(e)
			sim.cnt[mv.Part].Archived++
			sim.cnt[mv.Part].Moved++
			sim.moved = append(sim.moved, w)
		}
	}
	return missing
}

var errNoBody = errors.New("the message's body is not read yet")

// deadLetter builds the dead_letter_queue write of a move, as the embedded
// store's sharedPublishDLQ does: the message's data, group, created_at and
// attributes, plus its source and attempts; its codec if the queue takes
// it, else raw.
func (sp *sharedPlan) deadLetter(sim *shSim, mv sharedcore.Ref) (pendingWrite, error) {
	dlq := sim.cc.DeadLetterQueue
	if dlq == "" {
		return pendingWrite{}, fmt.Errorf("%w: no dead_letter_queue", topicstore.ErrTopicNotFound)
	}
	dt := sp.s.fold.ByName[dlq]
	if dt == nil {
		return pendingWrite{}, fmt.Errorf("%w: %q", topicstore.ErrTopicNotFound, dlq)
	}
	b := sp.bodies[bodyKey{sim.t.Rec.ID, mv.Part, mv.Off}]
	if b == nil {
		return pendingWrite{}, errNoBody
	}
	if b.err != nil {
		return pendingWrite{}, b.err
	}
	topic := sim.t.Rec.Config.Name
	dm := &b.msg
	out := topicstore.Message{Partition: -1, ProducerID: fmt.Sprintf("dlq/%s/%s/%d/%d", topic, sim.name, mv.Part, mv.Off),
		SeqNo: 1, HasSeqNo: true, MessageGroupID: dm.MessageGroupID, CreatedAt: dm.CreatedAt,
		Attrs: append(slices.Clone(dm.Attrs),
			topicstore.Attr{Key: "dlq_source_topic", Value: topic},
			topicstore.Attr{Key: "dlq_source_partition", Value: strconv.Itoa(int(mv.Part))},
			topicstore.Attr{Key: "dlq_source_offset", Value: strconv.FormatInt(mv.Off, 10)},
			topicstore.Attr{Key: "dlq_attempts", Value: strconv.Itoa(int(mv.Deliv))})}
	takes := func(c topicstore.Codec) bool {
		return len(dt.Rec.Config.SupportedCodecs) == 0 || slices.Contains(dt.Rec.Config.SupportedCodecs, c)
	}
	codec, body := topicstore.CodecOf(dm), dm.Body
	if !takes(codec) {
		if !takes(topicstore.CodecRaw) {
			return pendingWrite{}, fmt.Errorf("%w: topic %q does not accept codec %s", topicstore.ErrCodecNotSupported, dlq, codec)
		}
		var err error
		if body, err = topicstore.Decompress(codec, body); err != nil {
			return pendingWrite{}, err
		}
		codec = topicstore.CodecRaw
	}
	return pendingWrite{topic: dlq, msgs: []pendingMsg{{partition: -1, producer: out.ProducerID, group: out.MessageGroupID,
		seqNo: 1, hasSeqNo: true, tail: topicstore.AppendTail(nil, &out, codec, body, out.CreatedAt)}}}, nil
}

// messages returns the plan's state messages (a committer hook, after the
// requests are planned; it runs under s.mu): one per partition whose
// encoded state changed, a rollup of its subject conditional on its last
// sequence, marked Tg-Freed if a step may have made a message available;
// and, as the embedded store does, the consumer's committed position
// every 256 finished offsets and when a partition drains, so retention's
// important / availability_period rules see a shared consumer's progress
// (unless the group moves that position itself: poss). The position
// message carries no expectation: the state message next to it does, and
// a start only moves forward.
func (sp *sharedPlan) messages(poss map[posKey]*simPos) []*nats.Msg {
	const positionStep = 256
	var out []*nats.Msg
	for _, sim := range sp.order {
		if !sim.used {
			continue
		}
		id, gen := sim.t.Rec.ID, strconv.FormatUint(sim.c.Gen, 10)
		freed := sim.core.Freed
		for i, p := range sim.core.Parts {
			p.Advance()
			if sim.full[i] && p.Start > sim.start0[i] {
				freed = true // the window moves on: messages beyond it may load
			}
		}
		for i, p := range sim.core.Parts {
			st := fold.SharedState{Start: p.Start, Cnt: sim.cnt[i]}
			for j := range p.Ents {
				if e := &p.Ents[j]; !fold.Trivial(e) {
					st.Ents = append(st.Ents, fold.SharedEntry{Off: p.Start + int64(j), State: e.State, Expired: e.Expired, Deliv: e.Deliveries,
						Holder: e.Holder, ExpHolder: e.ExpHolder, Deadline: e.Deadline})
				}
			}
			for _, d := range sim.extra[i] {
				if d.Off >= p.LoadedEnd() {
					st.Ents = append(st.Ents, d)
				}
			}
			enc := st.Encode()
			if enc == sim.orig[i] {
				continue
			}
			m := nats.NewMsg(sp.s.subj.Shared(id, sim.name, int32(i)))
			m.Header.Set(fold.HShared, enc)
			m.Header.Set(fold.HGen, gen)
			if freed {
				m.Header.Set(fold.HFreed, "1")
			}
			m.Header.Set(natsjs.MsgRollup, natsjs.MsgRollupSubject)
			var seq uint64
			if pf := sim.c.Parts[int32(i)]; pf != nil {
				seq = pf.Seq
			}
			expect(m, seq)
			out = append(out, m)
			pos := sp.s.position(sim.t, sim.name, int32(i))
			if _, moved := poss[posKey{id, sim.name, int32(i)}]; !moved &&
				(p.Start-pos >= positionStep || p.Start >= sim.t.Parts[i].End && p.Start > pos) {
				pm := nats.NewMsg(sp.s.subj.Position(id, sim.name, int32(i)))
				pm.Header.Set(fold.HOff, strconv.FormatInt(p.Start, 10))
				pm.Header.Set(natsjs.MsgRollup, natsjs.MsgRollupSubject) // a drained queue moves it often
				out = append(out, pm)
			}
		}
	}
	return out
}
