package jetstream

import (
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
		t := s.fold.byName[w.topic]
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
			sp := prods[prodKey{t.rec.ID, c.ProducerID}]
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
			if int(m.partition) >= len(t.parts) {
				return topicstore.ErrPartitionNotFound
			}
			err := bound.Check(m.producer, m.partition, func() (int32, bool) {
				sp := prods[prodKey{t.rec.ID, m.producer}]
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
		t := s.fold.byName[u.Topic]
		if t == nil {
			return decide.TopicGone(u.Topic)
		}
		if !hasConsumer(t, u.Consumer) {
			return decide.ConsumerGone(u.Topic, u.Consumer)
		}
		if int(u.Partition) >= len(t.parts) || u.Partition < 0 {
			return decide.PartitionGone(u.Topic, u.Partition)
		}
		ps := t.parts[u.Partition]
		k := posKey{t.rec.ID, u.Consumer, u.Partition}
		cur := s.position(t, u.Consumer, u.Partition)
		if sp := poss[k]; sp != nil {
			cur = max(sp.off, ps.start)
		}
		if off, ok := moved[k]; ok {
			cur = off
		}
		d := decide.Position{Topic: u.Topic, Consumer: u.Consumer, Partition: u.Partition,
			Offset: u.Offset, Expect: u.Expect, Exact: r.exact}
		if err := decide.CheckPosition(d, cur, ps.start, ps.end); err != nil {
			return err
		}
		moved[k] = decide.Moved(d, ps.start)
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
func needsGuard(t *topicState) bool { return t.rec.Layout.Keyed }

// inactive reports whether partition p of t was split.
func inactive(t *topicState, p int32) bool { return decide.Inactive(&t.rec.Layout, p) }

// live is where a write naming partition p goes (decide.Live).
func live(t *topicState, p int32, key string) int32 { return decide.Live(&t.rec.Layout, p, key) }

// simProducer is a producer's state as the fold has it; a producer
// unknown, expired or bound to a partition that no longer exists is fresh.
func (s *Store) simProducer(t *topicState, producer string, now time.Time) *simProd {
	sp := &simProd{topic: t, producer: producer, fresh: true}
	if ps := t.prods[producer]; ps != nil {
		sp.expect = ps.seq
		if !decide.Expired(ps.at, now, s.expiry(t)) && int(ps.part) < len(t.parts) {
			sp.st, sp.fresh = *ps, false
		}
	}
	sp.d = decide.Producer{Part: sp.st.part, MaxSeqNo: sp.st.maxNo, Fresh: sp.fresh}
	return sp
}

// bind chooses a new producer's partition (decide.Bind).
func (s *Store) bind(t *topicState, producer string, explicit int32) int32 {
	return decide.Bind(&t.rec.Layout, producer, explicit, func() int32 { return s.roundRobin(t) })
}

// roundRobin picks the next active partition for an unbound write (and a
// new producer's binding). The cursor is the gateway's own: nothing but
// balance depends on it. It skips the partitions another gateway wrote
// last within contendedFor, as long as some partition is left: every
// gateway's batch expects its partitions' last sequences, so two gateways
// appending to one partition refuse each other's batches, and spreading
// unbound writes over disjoint partitions is what lets two gateways carry
// more than one.
func (s *Store) roundRobin(t *topicState) int32 {
	var active []int32
	for i, lp := range t.rec.Layout.Parts {
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
	p := active[int(t.rr)%len(active)]
	t.rr++
	return p
}

// share is this gateway's part of active when other gateways write the
// topic too: the gateways that wrote it within contendedFor, sorted by id,
// take every n-th partition each. Every gateway computes the same split
// from the same fold, so their unbound writes land in disjoint partitions.
func (s *Store) share(t *topicState, active []int32) []int32 {
	now := s.opts.Clock()
	gws := []string{s.stage.gw}
	for gw, at := range t.writers {
		if gw != s.stage.gw && now.Sub(at) <= contendedFor {
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

// contendedFor is how long a gateway counts as writing a topic after its
// last batch there.
const contendedFor = 5 * time.Second
