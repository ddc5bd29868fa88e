package plan

import (
	"topicgate/topicstore/jetstream/fold"

	"errors"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"

	"topicgate/topicstore"
)

// Planner plans the groups of one gateway. Its fields are what a plan
// reads of that gateway; it is used by one goroutine at a time (the
// store's, under its lock), as the fold state it reads.
type Planner struct {
	Fold *fold.State   // the gateway's fold, read as of the plan
	Subj fold.Subjects // the stream's subjects
	Gw   string        // this gateway's id (guards, record writers, stagings)
	// Clock is the gateway's clock (Options.Clock): producers' expiry,
	// locks' deadlines, written_at; Now is the committer's, by which a
	// plan is dated (Batch.Started).
	Clock, Now func() time.Time
	// BatchLimit is the most messages one atomic batch may hold.
	BatchLimit int
	// ProducerExpiry is the store's default producer expiry
	// (topicstore.ProducerExpiry).
	ProducerExpiry time.Duration
	// Window is each shared-consumer partition's acquisition window.
	Window int64
	// Caches are the gateway's caches of its shared consumers.
	Caches *SharedCaches
}

// Batch is one group's batch and what each request of it gets.
type Batch struct {
	Msgs []*nats.Msg // the batch (a marker on the chain goes first, if Mark asks for one)
	Reqs []*Request
	Res  []topicstore.CommitResult
	Errs []error // a request refused at planning: not in the batch
	// Wrote lists each request's partitions, for its write-speed delay.
	Wrote [][]PartKey
	// Mark: the batch is to be registered on the gateway's chain before it
	// is published (the store's markBatch: WitnessIndex names its witness,
	// or a marker goes first); not for an empty batch nor a wide one, which
	// marks each of its batches.
	Mark bool
	// Later: requests put off because the batch was full or a wide
	// request goes alone; Locked: requests touching a topic a wide
	// transaction holds. Neither is in Reqs.
	Later, Locked []*Request
	// Wide: the one request of Reqs is too wide for one batch; Guards are
	// then its catalog guards, which go in its decision batch.
	Wide   bool
	Guards []*nats.Msg
	// Started is when the plan was made, by the committer's clock.
	Started time.Time
	// Fresh lists the producers the plan took as new or expired: their
	// subjects' expectations are the ones an expiry can make wrong (the
	// store repairs them from the stream).
	Fresh []ProdKey
}

// Plan validates each request against the fold and the requests before it
// in the group, and builds the batch. A group whose batch would be too
// large for the server is cut to its first request, which, alone and
// still too large, is a wide transaction (jetstream/wide).
func (pl *Planner) Plan(group []*Request) *Batch {
	p := pl.plan(group)
	if len(p.Msgs)+1 <= pl.BatchLimit {
		p.Mark = len(p.Msgs) > 0
		return p
	}
	if p.Planned() > 1 {
		// Too large for one batch: the first request goes alone (the
		// others wait for the next group), and, alone and too large, wide.
		first := -1
		var rest []*Request
		for i, r := range p.Reqs {
			switch {
			case p.Errs[i] != nil:
				r.Out <- Outcome{Err: p.Errs[i]}
			case first < 0:
				first = i
			default:
				rest = append(rest, r)
			}
		}
		later, locked := p.Later, p.Locked
		p = pl.plan([]*Request{p.Reqs[first]})
		p.Later, p.Locked = append(append(p.Later, later...), rest...), append(p.Locked, locked...)
		if len(p.Msgs)+1 <= pl.BatchLimit {
			p.Mark = true
			return p
		}
	}
	p.Wide = true
	return p
}

// Settle answers every request: its own refusal, else the batch's outcome.
func (p *Batch) Settle(batchErr error) {
	for i, r := range p.Reqs {
		switch {
		case p.Errs[i] != nil:
			r.Out <- Outcome{Err: p.Errs[i]}
		case batchErr != nil:
			r.Out <- Outcome{Err: batchErr}
		default:
			r.Out <- Outcome{Res: p.Res[i]}
		}
	}
}

// Deadline is the earliest deadline of the requests in the batch: how long
// an outcome in doubt is resolved before it is answered unknown.
func (p *Batch) Deadline() time.Time {
	var d time.Time
	for i, r := range p.Reqs {
		if p.Errs[i] == nil && (d.IsZero() || r.Deadline.Before(d)) {
			d = r.Deadline
		}
	}
	return d
}

// Planned counts the requests in the batch.
func (p *Batch) Planned() int {
	n := 0
	for _, err := range p.Errs {
		if err == nil {
			n++
		}
	}
	return n
}

// WitnessIndex finds the batch's witness among its messages, a first
// record batch or else a shared-consumer state expecting its own subject,
// and the sequence it expects that subject at.
func (p *Batch) WitnessIndex() (int, uint64, bool) {
	for _, key := range []string{fold.HRec, fold.HShared} {
		for i, m := range p.Msgs {
			if m.Header.Get(key) == "" || m.Header.Get(natsjs.ExpectedLastSubjSeqSubjHeader) != "" {
				continue
			}
			v := m.Header.Get(natsjs.ExpectedLastSubjSeqHeader)
			if v == "" {
				continue
			}
			prev, err := strconv.ParseUint(v, 10, 64)
			return i, prev, err == nil
		}
	}
	return 0, 0, false
}

// Stagings lists the stagings the batch's requests join.
func (p *Batch) Stagings() []uint64 {
	var out []uint64
	for i, r := range p.Reqs {
		if p.Errs[i] == nil {
			out = append(out, r.Stagings...)
		}
	}
	return out
}

// plan is Plan of one try, without the cut to the first request.
func (pl *Planner) plan(group []*Request) *Batch {
	now := pl.Clock()
	p := &Batch{Reqs: group, Res: make([]topicstore.CommitResult, len(group)), Errs: make([]error, len(group)),
		Wrote: make([][]PartKey, len(group)), Started: pl.Now()}
	b := &groupBuild{pl: pl, p: p, now: now, parts: map[PartKey]*simPart{}, prods: map[ProdKey]*simProd{},
		poss: map[posKey]*simPos{}, guarded: map[uint64]bool{}, msgCount: 1 /* the marker */, sticky: map[uint64]int32{}}
	sh := pl.newSharedPlan(group) // shared-consumer steps (shared.go)
	for i, r := range group {
		if i > 0 && b.msgCount+sh.msgs >= pl.groupLimit() {
			// The batch is full: the rest waits for the next group.
			p.Errs[i] = errRequeue
			continue
		}
		// Validate first, against the group's simulation; only then apply.
		if err := pl.checkRequest(r, now, b.prods, b.poss); err != nil {
			p.Errs[i] = err
			continue
		}
		if r.Staged {
			if err := pl.Fold.Swept.Check(pl.Gw, r.OpenedAt); err != nil {
				p.Errs[i] = err
				continue
			}
		}
		writes, err := sh.step(r, now) // r's shared-consumer steps; dead-letter copies join its writes
		if err != nil {
			p.Errs[i] = err
			continue
		}
		b.positions(r)
		b.fences(r)
		res := topicstore.CommitResult{Writes: make([]topicstore.WriteResult, len(writes))}
		b.placed = nil
		for wi := range writes {
			b.wi = wi
			b.write(i, &writes[wi], &res.Writes[wi])
		}
		res.Writes = res.Writes[:len(r.Writes)]
		// Dead-letter copies (writes past r's own) are not the caller's.
		for _, pl := range b.placed {
			if pl.Write < len(r.Writes) {
				res.Placed = append(res.Placed, pl)
			}
		}
		p.Res[i] = res
	}
	b.messages(sh)
	p.putOff()
	return p
}

// putOff takes out of the plan the requests put off (the batch was full,
// or a wide transaction holds a topic it touches); the committer sends
// them again.
func (p *Batch) putOff() {
	keep := p.Reqs[:0:0]
	var keepRes []topicstore.CommitResult
	var keepErrs []error
	var keepWrote [][]PartKey
	for i, r := range p.Reqs {
		switch p.Errs[i] {
		case errRequeue:
			p.Later = append(p.Later, r)
			continue
		case errLocked:
			p.Locked = append(p.Locked, r)
			continue
		}
		keep, keepRes, keepErrs = append(keep, r), append(keepRes, p.Res[i]), append(keepErrs, p.Errs[i])
		keepWrote = append(keepWrote, p.Wrote[i])
	}
	p.Reqs, p.Res, p.Errs, p.Wrote = keep, keepRes, keepErrs, keepWrote
}

// groupLimit is how many messages a group's batch is filled to.
func (pl *Planner) groupLimit() int {
	return min(maxGroupMsgs, pl.BatchLimit-pl.BatchLimit/10)
}

// errRequeue: the batch is full, the request waits for the next group;
// ErrExpand: a staged chunk is partly duplicates, so the request goes
// back to its caller to join it as messages.
var (
	errRequeue = errors.New("requeue")
	ErrExpand  = errors.New("expand staged chunks")
	errLocked  = errors.New("a topic is held by a wide transaction")
)

// ProducerRollupEvery bounds the messages a producer's subject holds:
// every ProducerRollupEvery-th write rolls it up. Measured through a
// gateway on three nodes syncing every write (ingest-dedup, 16
// producers), a rollup on every write cost 5-7% of the throughput.
const ProducerRollupEvery = 32

// maxGroupMsgs bounds the messages of one group's batch below the server's
// limit of jsext.MaxBatchMsgs (a wide transaction's batches use the whole
// limit); maxRecordBytes bounds one record batch message below NATS's
// default max_payload of 1 MiB.
const (
	maxGroupMsgs   = 900
	maxRecordBytes = 512 << 10
)
