package plan

import (
	"topicgate/topicstore/jetstream/fold"

	"slices"
	"time"
	"topicgate/topicstore"
	"topicgate/topicstore/decide"
)

// What a plan checks a request against, and where its messages go:
// the cluster store's side of the rules topicstore/decide states.

// checkRequest refuses a request that cannot commit: a topic gone, a
// partition it lacks, a producer named in another partition than its
// binding, a position that moved.
func (pl *Planner) checkRequest(r *Request, now time.Time, prods map[ProdKey]*simProd, poss map[posKey]*simPos) error {
	if pl.requestLocked(r) {
		return errLocked // a wide transaction holds a topic it touches (fold.Wide)
	}
	for _, w := range r.Writes {
		t := pl.Fold.ByName[w.Topic]
		if t == nil {
			return topicstore.ErrTopicNotFound
		}
		var bound decide.Bindings
		// A staged chunk of a producer is decided whole from its summary:
		// all new or all duplicates; one that is partly duplicates goes
		// back to be joined as messages (errExpand).
		maxNo := map[string]int64{}
		for _, c := range w.Staged {
			if c.ProducerID == "" {
				continue
			}
			sp := prods[ProdKey{t.Rec.ID, c.ProducerID}]
			if sp == nil {
				sp = pl.simProducer(t, c.ProducerID, now)
			}
			if c.Partition >= 0 && !sp.d.Fresh && !inactive(t, sp.d.Part) && sp.d.Part != c.Partition {
				return &topicstore.ProducerPartitionError{Producer: c.ProducerID, Bound: sp.d.Part, Named: c.Partition}
			}
			cur, seen := maxNo[c.ProducerID]
			if !seen && !sp.d.Fresh {
				cur, seen = sp.d.MaxSeqNo, true
			}
			if seen && c.SeqMin <= cur && c.SeqMax > cur {
				return ErrExpand
			}
			if !seen || c.SeqMax > cur {
				maxNo[c.ProducerID] = c.SeqMax
			}
		}
		for _, m := range w.Msgs {
			if int(m.Partition) >= len(t.Parts) {
				return topicstore.ErrPartitionNotFound
			}
			err := bound.Check(m.Producer, m.Partition, func() (int32, bool) {
				sp := prods[ProdKey{t.Rec.ID, m.Producer}]
				if sp == nil {
					sp = pl.simProducer(t, m.Producer, now)
				}
				if !sp.d.Fresh && !inactive(t, sp.d.Part) {
					return sp.d.Part, true // a split partition's binding is void
				}
				return 0, false
			})
			if err != nil {
				return err
			}
		}
	}
	for _, f := range r.Fences {
		t := pl.Fold.ByName[f.Topic]
		if t == nil {
			return decide.TopicGone(f.Topic)
		}
		sp := prods[ProdKey{t.Rec.ID, f.Producer}]
		if sp == nil {
			sp = pl.simProducer(t, f.Producer, now)
		}
		var d *decide.Producer
		if !sp.d.Fresh {
			d = &sp.d
		}
		if err := decide.CheckFence(f.Topic, f.Producer, d, f.Below); err != nil {
			return err
		}
	}
	moved := map[posKey]int64{} // this request's earlier updates
	for _, u := range r.Pos {
		t := pl.Fold.ByName[u.Topic]
		if t == nil {
			return decide.TopicGone(u.Topic)
		}
		if !t.HasConsumer(u.Consumer) {
			return decide.ConsumerGone(u.Topic, u.Consumer)
		}
		if int(u.Partition) >= len(t.Parts) || u.Partition < 0 {
			return decide.PartitionGone(u.Topic, u.Partition)
		}
		ps := t.Parts[u.Partition]
		k := posKey{t.Rec.ID, u.Consumer, u.Partition}
		cur := t.Position(u.Consumer, u.Partition)
		if sp := poss[k]; sp != nil {
			cur = max(sp.off, ps.Start)
		}
		if off, ok := moved[k]; ok {
			cur = off
		}
		d := decide.Position{Topic: u.Topic, Consumer: u.Consumer, Partition: u.Partition,
			Offset: u.Offset, Expect: u.Expect, Exact: r.Exact, Forget: u.Forget}
		if err := decide.CheckPosition(d, cur, ps.Start, ps.End); err != nil {
			return err
		}
		moved[k] = decide.Moved(d, ps.Start)
	}
	return nil
}

// needsGuard reports whether a commit touching t carries a guard on its
// catalog subject: only a keyed (auto-partitioned) topic's layout can
// change under a commit (a split) in a way that would make it write where
// it must not, an inactive parent. A flat topic only gains partitions; a
// write racing its DROP lands under the dropped topic's ID, which no fold
// reads. The guard is not free: the server refuses an expectation on a
// subject another in-flight batch also checks (10164), so every gateway
// writing the topic serializes on it; flat topics, the common case, do
// without.
func needsGuard(t *fold.Topic) bool { return t.Rec.Layout.Keyed }

// inactive reports whether partition p of t was split.
func inactive(t *fold.Topic, p int32) bool { return decide.Inactive(&t.Rec.Layout, p) }

// live is where a write naming partition p goes (decide.Live).
func live(t *fold.Topic, p int32, key string) int32 { return decide.Live(&t.Rec.Layout, p, key) }

// simProducer is a producer's state as the fold has it; a producer
// unknown, expired or bound to a partition that no longer exists is fresh.
func (pl *Planner) simProducer(t *fold.Topic, producer string, now time.Time) *simProd {
	sp := &simProd{topic: t, producer: producer, fresh: true}
	if ps := t.Prods[producer]; ps != nil {
		sp.expect = ps.Seq
		if !decide.Expired(ps.At, now, pl.expiry(t)) && int(ps.Part) < len(t.Parts) {
			sp.st, sp.fresh = *ps, false
		}
	}
	sp.d = decide.Producer{Part: sp.st.Part, MaxSeqNo: sp.st.MaxNo, Fresh: sp.fresh}
	return sp
}

// bind chooses a new producer's partition (decide.Bind).
func (pl *Planner) bind(t *fold.Topic, producer string, explicit int32) int32 {
	return decide.Bind(&t.Rec.Layout, producer, explicit, func() int32 { return pl.roundRobin(t) })
}

// roundRobin picks the next active partition for an unbound write (and a
// new producer's binding). The cursor is the gateway's own: nothing but
// balance depends on it. It skips the partitions another gateway wrote
// last within fold.ContendedFor, as long as some partition is left: every
// gateway's batch expects its partitions' last sequences, so two gateways
// appending to one partition refuse each other's batches, and spreading
// unbound writes over disjoint partitions is what lets two gateways carry
// more than one.
func (pl *Planner) roundRobin(t *fold.Topic) int32 {
	var active []int32
	for i, lp := range t.Rec.Layout.Parts {
		if !lp.Inactive {
			active = append(active, int32(i))
		}
	}
	if len(active) == 0 {
		return 0
	}
	if mine := pl.share(t, active); len(mine) > 0 {
		active = mine
	}
	p := active[int(t.Rr)%len(active)]
	t.Rr++
	return p
}

// share is this gateway's part of active when other gateways write the
// topic too: the gateways that wrote it within fold.ContendedFor, sorted by id,
// take every n-th partition each. Every gateway computes the same split
// from the same fold, so their unbound writes land in disjoint partitions.
func (pl *Planner) share(t *fold.Topic, active []int32) []int32 {
	now := pl.Clock()
	gws := []string{pl.Gw}
	for gw, at := range t.Writers {
		if gw != pl.Gw && now.Sub(at) <= fold.ContendedFor {
			gws = append(gws, gw)
		}
	}
	if len(gws) == 1 || len(active) < len(gws) {
		return nil
	}
	slices.Sort(gws)
	k := slices.Index(gws, pl.Gw)
	var out []int32
	for i, p := range active {
		if i%len(gws) == k {
			out = append(out, p)
		}
	}
	return out
}

// requestLocked reports whether a wide transaction holds a topic r
// touches.
func (pl *Planner) requestLocked(r *Request) bool {
	if len(pl.Fold.Wide.Locked) == 0 {
		return false
	}
	held := func(name string) bool {
		t := pl.Fold.ByName[name]
		return t != nil && pl.Fold.Wide.Locked[t.Rec.ID] > 0
	}
	for _, w := range r.Writes {
		if held(w.Topic) {
			return true
		}
	}
	for _, u := range r.Pos {
		if held(u.Topic) {
			return true
		}
	}
	for _, st := range r.Steps {
		if held(st.Topic) {
			return true
		}
		if t := pl.Fold.ByName[st.Topic]; t != nil {
			for _, c := range t.Rec.Config.Consumers {
				if c.Name == st.Consumer && c.DeadLetterQueue != "" && held(c.DeadLetterQueue) {
					return true
				}
			}
		}
	}
	return false
}

// expiry is how long t's producers live without writes.
func (pl *Planner) expiry(t *fold.Topic) time.Duration {
	return topicstore.ProducerExpiry(&t.Rec.Config, pl.ProducerExpiry)
}
