package jetstream

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
func (s *Store) checkRequest(r *commitReq, now time.Time, prods map[prodKey]*simProd, poss map[posKey]*simPos) error {
	if s.requestLocked(r) {
		return errLocked // a wide transaction holds a topic it touches (wide.go)
	}
	for _, w := range r.writes {
		t := s.fold.ByName[w.topic]
		if t == nil {
			return topicstore.ErrTopicNotFound
		}
		var bound decide.Bindings
		// A staged chunk of a producer is decided whole from its summary:
		// all new or all duplicates; one that is partly duplicates goes
		// back to be joined as messages (errExpand).
		maxNo := map[string]int64{}
		for _, c := range w.staged {
			if c.ProducerID == "" {
				continue
			}
			sp := prods[prodKey{t.Rec.ID, c.ProducerID}]
			if sp == nil {
				sp = s.simProducer(t, c.ProducerID, now)
			}
			if c.Partition >= 0 && !sp.d.Fresh && !inactive(t, sp.d.Part) && sp.d.Part != c.Partition {
				return &topicstore.ProducerPartitionError{Producer: c.ProducerID, Bound: sp.d.Part, Named: c.Partition}
			}
			cur, seen := maxNo[c.ProducerID]
			if !seen && !sp.d.Fresh {
				cur, seen = sp.d.MaxSeqNo, true
			}
			if seen && c.SeqMin <= cur && c.SeqMax > cur {
				return errExpand
			}
			if !seen || c.SeqMax > cur {
				maxNo[c.ProducerID] = c.SeqMax
			}
		}
		for _, m := range w.msgs {
			if int(m.partition) >= len(t.Parts) {
				return topicstore.ErrPartitionNotFound
			}
			err := bound.Check(m.producer, m.partition, func() (int32, bool) {
				sp := prods[prodKey{t.Rec.ID, m.producer}]
				if sp == nil {
					sp = s.simProducer(t, m.producer, now)
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
	moved := map[posKey]int64{} // this request's earlier updates
	for _, u := range r.pos {
		t := s.fold.ByName[u.Topic]
		if t == nil {
			return decide.TopicGone(u.Topic)
		}
		if !hasConsumer(t, u.Consumer) {
			return decide.ConsumerGone(u.Topic, u.Consumer)
		}
		if int(u.Partition) >= len(t.Parts) || u.Partition < 0 {
			return decide.PartitionGone(u.Topic, u.Partition)
		}
		ps := t.Parts[u.Partition]
		k := posKey{t.Rec.ID, u.Consumer, u.Partition}
		cur := s.position(t, u.Consumer, u.Partition)
		if sp := poss[k]; sp != nil {
			cur = max(sp.off, ps.Start)
		}
		if off, ok := moved[k]; ok {
			cur = off
		}
		d := decide.Position{Topic: u.Topic, Consumer: u.Consumer, Partition: u.Partition,
			Offset: u.Offset, Expect: u.Expect, Exact: r.exact}
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
func (s *Store) simProducer(t *fold.Topic, producer string, now time.Time) *simProd {
	sp := &simProd{topic: t, producer: producer, fresh: true}
	if ps := t.Prods[producer]; ps != nil {
		sp.expect = ps.Seq
		if !decide.Expired(ps.At, now, s.expiry(t)) && int(ps.Part) < len(t.Parts) {
			sp.st, sp.fresh = *ps, false
		}
	}
	sp.d = decide.Producer{Part: sp.st.Part, MaxSeqNo: sp.st.MaxNo, Fresh: sp.fresh}
	return sp
}

// bind chooses a new producer's partition (decide.Bind).
func (s *Store) bind(t *fold.Topic, producer string, explicit int32) int32 {
	return decide.Bind(&t.Rec.Layout, producer, explicit, func() int32 { return s.roundRobin(t) })
}

// roundRobin picks the next active partition for an unbound write (and a
// new producer's binding). The cursor is the gateway's own: nothing but
// balance depends on it. It skips the partitions another gateway wrote
// last within fold.ContendedFor, as long as some partition is left: every
// gateway's batch expects its partitions' last sequences, so two gateways
// appending to one partition refuse each other's batches, and spreading
// unbound writes over disjoint partitions is what lets two gateways carry
// more than one.
func (s *Store) roundRobin(t *fold.Topic) int32 {
	var active []int32
	for i, lp := range t.Rec.Layout.Parts {
		if !lp.Inactive {
			active = append(active, int32(i))
		}
	}
	if len(active) == 0 {
		return 0
	}
	if mine := s.share(t, active); len(mine) > 0 {
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
func (s *Store) share(t *fold.Topic, active []int32) []int32 {
	now := s.opts.Clock()
	gws := []string{s.stage.gw}
	for gw, at := range t.Writers {
		if gw != s.stage.gw && now.Sub(at) <= fold.ContendedFor {
			gws = append(gws, gw)
		}
	}
	if len(gws) == 1 || len(active) < len(gws) {
		return nil
	}
	slices.Sort(gws)
	k := slices.Index(gws, s.stage.gw)
	var out []int32
	for i, p := range active {
		if i%len(gws) == k {
			out = append(out, p)
		}
	}
	return out
}
