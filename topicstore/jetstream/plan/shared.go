package plan

import (
	"topicgate/topicstore/jetstream/fold"
	"topicgate/topicstore/jetstream/jsext"

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

// Shared consumers on the cluster: steps in the commit's plan.
//
// Every SharedStore call, and every acknowledgement in a commit, is a step
// (Step) that the committer plans with the group it arrives in (plan
// calls newSharedPlan, step and messages): each (topic,
// consumer) the group touches gets a sharedcore.Core rebuilt from the
// fold's state and the gateway's metadata cache (shSim), lock expiry
// applied as of the plan's clock; the group's steps run on it in order,
// exactly as the embedded store runs them on its in-memory core; then each
// partition whose encoded state changed gets one state message,
// conditional on its subject's last sequence, in the group's atomic batch.
// So a lock is decided by the cluster: a batch planned on a state that
// another gateway changed meanwhile is refused whole and planned again
// from the caught-up fold (the committer's runGroup), and the outcomes a caller gets are
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
// cache has loaded (the store fills it before each step); durable entries of
// messages beyond it (another gateway loaded further) are carried over
// unchanged, neither handed out nor expired by this plan, and with
// keep_messages_order do not hold their groups here (a window is a whole
// sharedcore.DefaultWindow as soon as the cache catches up).
//
// Dead-letter moves ride in the same batch too: the message's copy is a
// write to the dead_letter_queue (same stream), with the producer
// "dlq/<topic>/<consumer>/<partition>/<offset>" and seqno 1 as in the
// embedded store, and the message is archived by the state message next
// to it. The plan cannot read a message's body (a plan does no I/O), so a
// step whose move lacks it is taken back and refused with NeedBodiesError;
// its caller reads the messages and sends the step again (SharedAction
// reads them beforehand when its action may move). A move that the
// plan's lock expiry starts without the body is taken back too: the lock
// stays as it was, past its deadline (its holder hears OutcomeExpired,
// nobody else may take it) until the caller, told so by sim.limbo, reads
// the bodies and sends a step that finishes the move. A move
// whose queue does not exist (or takes no codec of the message) fails as
// in the embedded store: the message goes back to the queue, the failure
// is counted with its reason.

// StepKind says what a Step does.
type StepKind uint8

const (
	StepAcquire   StepKind = iota + 1 // Pick
	StepAct                           // SharedAction
	StepRelease                       // ReleaseSession
	StepUndeliver                     // ReleaseUndelivered
	StepStats                         // SharedStats; also finishes moves (limbo)
	StepAck                           // an acknowledgement in a commit
)

// Step is one shared-consumer step; Out is set by the plan that last
// ran it (read by the caller once its request is settled).
type Step struct {
	Kind            StepKind
	Topic, Consumer string
	Holder          sharedcore.Holder
	Max             int           // StepAcquire
	Timeout         time.Duration // StepAcquire
	MaxBytes        int64         // StepAcquire
	Watch           bool          // StepAcquire
	Action          topicstore.SharedAction
	Refs            []topicstore.MsgRef // StepAct, StepRelease (nil: all), StepUndeliver, StepAck
	Until           time.Time           // StepAct (ActionExtend)
	Bodies          map[BodyKey]*Body   // messages read for dead-letter moves
	Out             StepOut
}

// StepOut is what a step gave its caller.
type StepOut struct {
	Picked    []Picked
	Until     time.Time
	Outcomes  []topicstore.SharedOutcome
	Stats     []topicstore.SharedPartitionStats
	Published <-chan struct{}
	Freed     <-chan struct{}
	NextReady time.Duration
	Limbo     []topicstore.MsgRef // expired locks whose dead-letter move waits for their bodies
}

// Picked is a message a StepAcquire handed out.
type Picked struct {
	Ref   topicstore.MsgRef
	Deliv int32
}

// BodyKey names a message read for a dead-letter move.
type BodyKey struct {
	Topic uint64
	Part  int32
	Off   int64
}

// Body is a message read for a dead-letter move.
type Body struct {
	Msg topicstore.Message // stored body, codec
	Err error              // not readable
}

// NeedBodiesError refuses a step whose dead-letter moves need the bodies
// of refs.
type NeedBodiesError struct{ Refs []topicstore.MsgRef }

func (e *NeedBodiesError) Error() string {
	return fmt.Sprintf("dead-letter moves need %d messages read", len(e.Refs))
}

// sharedPlan is the shared-consumer part of one plan of a group.
type sharedPlan struct {
	pl     *Planner
	sims   map[simKey]*shSim
	order  []*shSim
	bodies map[BodyKey]*Body
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
	c      Consumer
	core   *sharedcore.Core
	extra  [][]fold.SharedEntry // per partition: durable entries beyond the loaded window, kept as they are
	cnt    []fold.SharedCounts
	orig   []string // per partition: the state as the fold has it, encoded
	start0 []int64  // per partition: the start as built
	full   []bool   // per partition: the window held a whole window of messages (shWindow)
	limbo  []topicstore.MsgRef
	moved  []Write // dead-letter copies decided and not yet handed to a request
	used   bool    // a step ran on it
}

// newSharedPlan starts the shared-consumer part of a plan of group (a
// plan's hook).
func (pl *Planner) newSharedPlan(group []*Request) *sharedPlan {
	sp := &sharedPlan{pl: pl, sims: map[simKey]*shSim{}}
	for _, r := range group {
		for _, st := range r.Steps {
			for k, b := range st.Bodies {
				if sp.bodies == nil {
					sp.bodies = map[BodyKey]*Body{}
				}
				sp.bodies[k] = b
			}
		}
	}
	return sp
}

// sim returns the plan's core of (topic, consumer), built on first use.
func (sp *sharedPlan) sim(topic, consumer string, now time.Time) (*shSim, error) {
	pl := sp.pl
	t, cc, c, err := pl.Caches.Lookup(pl.Fold, topic, consumer)
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
	window := pl.Window
	core := &sharedcore.Core{Cfg: sharedcore.NewConfig(cc), Window: int(window), Parts: make([]*sharedcore.Part, n), RR: c.rr % max(n, 1)}
	core.Tree = sharedcore.Tree{Parent: make([]int32, n), End: func(p int32) int64 { return t.Parts[p].End }}
	for i := range n {
		p := int32(i)
		core.Tree.Parent[i] = -1
		if i < len(t.Rec.Layout.Parts) && t.Rec.Layout.Parts[i].Parent >= 0 {
			core.Tree.Parent[i], core.Tree.Split = t.Rec.Layout.Parts[i].Parent, true
		}
		st, start := SharedState(t, consumer, c, p)
		if st != nil {
			sim.orig[i], sim.cnt[i] = c.Parts[p].Raw, st.Cnt
		} else {
			sim.orig[i] = (&fold.SharedState{Start: start}).Encode()
		}
		end := start // the loaded window: what the cache has from start on
		if m := c.Meta[p]; m != nil && m.Base <= start {
			end = max(start, min(start+window, t.Parts[p].End, m.End()))
		}
		part := &sharedcore.Part{Start: start, Ents: c.entries(p, int(end-start))}
		if end > start {
			m := c.Meta[p]
			for j := range part.Ents {
				me := &m.Ents[start-m.Base+int64(j)]
				part.Ents[j] = sharedcore.Entry{Written: me.Written, Delay: me.Delay, Group: me.Group}
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

// step runs r's shared-consumer steps (the plan's hook): it returns the
// writes to plan for r, its own plus the dead-letter moves of its steps,
// or the error that refuses r (its steps then changed nothing).
func (sp *sharedPlan) step(r *Request, now time.Time) ([]Write, error) {
	if len(r.Steps) == 0 {
		return r.Writes, nil
	}
	// Acknowledgements in a commit: all held, or the commit fails.
	for _, st := range r.Steps {
		if st.Kind != StepAck {
			continue
		}
		sim, err := sp.sim(st.Topic, st.Consumer, now)
		if err != nil {
			return nil, err
		}
		for _, ref := range st.Refs {
			if !sim.core.Held(now.UnixNano(), st.Holder, ref) {
				return nil, fmt.Errorf("%w: topic %q consumer %q partition %d offset %d session %d",
					topicstore.ErrLockExpired, st.Topic, st.Consumer, ref.Partition, ref.Offset, st.Holder.Session)
			}
		}
	}
	writes := r.Writes
	for _, st := range r.Steps {
		sim, err := sp.sim(st.Topic, st.Consumer, now)
		if err != nil {
			return nil, err
		}
		var undo *shSim
		if sim.core.Cfg.Policy == "move" && (st.Kind == StepAct || st.Kind == StepRelease) {
			undo = sim.clone()
		}
		w, missing := sim.run(st, now, sp)
		if len(missing) > 0 {
			*sim = *undo
			return nil, &NeedBodiesError{Refs: missing}
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
func (sim *shSim) run(st *Step, now time.Time, sp *sharedPlan) ([]Write, []topicstore.MsgRef) {
	c, ns := sim.core, now.UnixNano()
	st.Out = StepOut{Limbo: sim.limbo}
	var eff sharedcore.Effects
	switch st.Kind {
	case StepAcquire:
		timeout := st.Timeout
		if timeout <= 0 {
			timeout = c.Cfg.Timeout
		}
		st.Out.Until = now.Add(timeout)
		refs := c.Pick(ns, st.Max, st.Holder, st.Out.Until.UnixNano())
		if st.MaxBytes > 0 { // keep the pick order's prefix that fits
			n, size := 0, int64(0)
			for n < len(refs) && (n == 0 || size+sim.size(refs[n]) <= st.MaxBytes) {
				size += sim.size(refs[n])
				n++
			}
			for _, r := range refs[n:] {
				c.Unpick(r)
			}
			refs = refs[:n]
		}
		for _, r := range refs {
			st.Out.Picked = append(st.Out.Picked, Picked{r, c.Parts[r.Partition].At(r.Offset).Deliveries})
		}
		if len(refs) == 0 && st.Watch {
			st.Out.Published, st.Out.Freed = sim.t.Changed, sim.c.FreedChan()
			if next := c.NextReady(ns); next > 0 {
				st.Out.NextReady = time.Duration(next - ns)
			}
		}
		sim.c.rr = c.RR
	case StepAct:
		until := st.Until
		if until.IsZero() { // ActionExtend without Until: by the consumer's timeout
			until = now.Add(c.Cfg.Timeout)
		}
		st.Out.Outcomes = make([]topicstore.SharedOutcome, len(st.Refs))
		for i, r := range st.Refs {
			if r.Partition < 0 || int(r.Partition) >= len(sim.t.Parts) || r.Offset < sim.t.Parts[r.Partition].Start ||
				r.Offset >= sim.t.Parts[r.Partition].End {
				st.Out.Outcomes[i] = topicstore.OutcomeUnknown
				continue
			}
			st.Out.Outcomes[i] = c.Act(ns, st.Holder, st.Action, r, until, &eff)
		}
	case StepAck:
		for _, r := range st.Refs {
			c.Act(ns, st.Holder, topicstore.ActionAck, r, time.Time{}, &eff)
		}
	case StepRelease:
		c.ReleaseSession(st.Holder, st.Refs, &eff)
	case StepUndeliver:
		for _, r := range st.Refs {
			c.Unacquire(st.Holder, r)
		}
	case StepStats:
		st.Out.Stats = make([]topicstore.SharedPartitionStats, len(c.Parts))
		for i, p := range c.Parts {
			p.Advance()
			st.Out.Stats[i] = c.Stats(i, ns)
			cnt := &sim.cnt[i]
			st.Out.Stats[i].ArchivedTotal, st.Out.Stats[i].DeadLettered = cnt.Archived, cnt.Moved
			st.Out.Stats[i].DeadLetterFailures, st.Out.Stats[i].DeadLetterError = cnt.Failures, cnt.LastErr
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
	m := sim.c.Meta[r.Partition]
	return m.Ents[r.Offset-m.Base].Size
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
func (sp *sharedPlan) deadLetter(sim *shSim, mv sharedcore.Ref) (Write, error) {
	dlq := sim.cc.DeadLetterQueue
	if dlq == "" {
		return Write{}, fmt.Errorf("%w: no dead_letter_queue", topicstore.ErrTopicNotFound)
	}
	dt := sp.pl.Fold.ByName[dlq]
	if dt == nil {
		return Write{}, fmt.Errorf("%w: %q", topicstore.ErrTopicNotFound, dlq)
	}
	b := sp.bodies[BodyKey{sim.t.Rec.ID, mv.Part, mv.Off}]
	if b == nil {
		return Write{}, errNoBody
	}
	if b.Err != nil {
		return Write{}, b.Err
	}
	topic := sim.t.Rec.Config.Name
	dm := &b.Msg
	out := topicstore.Message{Partition: -1, ProducerID: fmt.Sprintf("dlq/%s/%s/%d/%d", topic, sim.name, mv.Part, mv.Off),
		SeqNo: 1, HasSeqNo: true, MessageGroupID: dm.MessageGroupID, CreatedAt: dm.CreatedAt,
		Attrs: append(slices.Clone(dm.Attrs),
			topicstore.Attr{Key: "dlq_source_topic", Value: topic},
			topicstore.Attr{Key: "dlq_source_partition", Value: strconv.Itoa(int(mv.Part))},
			topicstore.Attr{Key: "dlq_source_offset", Value: strconv.FormatInt(mv.Off, 10)},
			topicstore.Attr{Key: "dlq_attempts", Value: strconv.Itoa(int(mv.Deliv))}),
		Key: dm.Key, Headers: dm.Headers, NullBody: dm.NullBody}
	takes := func(c topicstore.Codec) bool {
		return len(dt.Rec.Config.SupportedCodecs) == 0 || slices.Contains(dt.Rec.Config.SupportedCodecs, c)
	}
	codec, body := topicstore.CodecOf(dm), dm.Body
	if !takes(codec) {
		if !takes(topicstore.CodecRaw) {
			return Write{}, fmt.Errorf("%w: topic %q does not accept codec %s", topicstore.ErrCodecNotSupported, dlq, codec)
		}
		var err error
		if body, err = topicstore.Decompress(codec, body); err != nil {
			return Write{}, err
		}
		codec = topicstore.CodecRaw
	}
	return Write{Topic: dlq, Msgs: []Msg{{Partition: -1, Producer: out.ProducerID, Group: out.MessageGroupID,
		SeqNo: 1, HasSeqNo: true, Tail: topicstore.AppendTail(nil, &out, codec, body, out.CreatedAt)}}}, nil
}

// messages returns the plan's state messages (the plan's hook, after the
// requests are planned): one per partition whose
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
			m := nats.NewMsg(sp.pl.Subj.Shared(id, sim.name, int32(i)))
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
			jsext.Expect(m, seq)
			out = append(out, m)
			pos := sim.t.Position(sim.name, int32(i))
			if _, moved := poss[posKey{id, sim.name, int32(i)}]; !moved &&
				(p.Start-pos >= positionStep || p.Start >= sim.t.Parts[i].End && p.Start > pos) {
				pm := nats.NewMsg(sp.pl.Subj.Position(id, sim.name, int32(i)))
				pm.Header.Set(fold.HOff, strconv.FormatInt(p.Start, 10))
				pm.Header.Set(natsjs.MsgRollup, natsjs.MsgRollupSubject) // a drained queue moves it often
				out = append(out, pm)
			}
		}
	}
	return out
}
