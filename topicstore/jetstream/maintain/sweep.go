package maintain

import (
	"context"
	"sort"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"

	"topicgate/topicstore/jetstream/fold"
	"topicgate/topicstore/jetstream/jsext"
)

// Sweeping what dead gateways staged. A gateway's staged chunks
// (<prefix>.t.<gateway>.<transaction>, the store's stage.go) are referenced by a
// commit or discarded by the gateway itself; one that dies with open
// transactions leaves them behind. The holder of the maintenance lease
// sweeps them: the chunks, not referenced by any record, of every gateway
// whose heartbeat (jetstream/groups; a gateway renews it while it has open
// stagings) expired a TTL ago or that never had one, once its newest
// chunk is a TTL old.
//
// A gateway only cut off from the cluster is not dead, and may come back
// and commit what it staged. A fence keeps that from referencing swept
// chunks: before deleting anything the sweeper publishes a fence on the
// gateway's subject <prefix>.f.<gateway>, conditional on the subject's
// last sequence as folded, and deletes only chunks stored before the
// fence. Every commit batch that joins staged chunks carries a fence
// check on the same subject, conditional the same way, so of a commit
// and a fence racing one is refused; and a commit whose staging opened
// before a fence this gateway has folded is refused by the plan with
// ErrStagingSwept (40001: the transaction is retried whole). Both are
// one subject's compare-and-set, so no sweep ever deletes a chunk a
// commit references.

// wideOpen reports whether gateway gw has a wide transaction without a
// decision (fold.Wide). It runs under the host's lock.
func (m *Maintenance) wideOpen(gw string) bool {
	for _, x := range m.cfg.Fold.Wide.Open {
		if x.Gw == gw {
			return true
		}
	}
	return false
}

// MarkGone publishes the "gone" marker of a staging on its subject:
// every fold forgets its chunks stored before below (0: before the
// marker), and a rollup (rollup set) deletes every chunk before it in the
// same step, also one that landed late, after a purge. The publisher
// deletes the marker once its own fold applied it; should it never learn
// the marker was stored, or die, the marker expires (goneTTL).
func (m *Maintenance) MarkGone(ctx context.Context, subject string, below uint64, rollup bool) error {
	msg := nats.NewMsg(subject)
	msg.Header.Set(fold.HGone, strconv.FormatUint(below, 10))
	msg.Header.Set(natsjs.MsgTTLHeader, goneTTL.String())
	if rollup {
		msg.Header.Set(natsjs.MsgRollup, natsjs.MsgRollupSubject)
	}
	rctx, cancel := m.request(ctx)
	seq, err := m.host.Publish(rctx, msg)
	cancel()
	if err != nil {
		return m.host.Unavailable(err)
	}
	rctx, cancel = m.request(ctx)
	err = m.host.WaitApplied(rctx, seq)
	cancel()
	if err != nil {
		return err
	}
	rctx, cancel = m.request(ctx)
	err = m.host.DeleteMsg(rctx, seq)
	cancel()
	if err != nil {
		return m.host.Unavailable(err)
	}
	return nil
}

// goneTTL is how long a "gone" marker its publisher did not delete stays
// in the stream.
const goneTTL = time.Hour

// Sweep sweeps the staged chunks of dead gateways and reports how
// many it deleted.
func (m *Maintenance) Sweep(ctx context.Context) (int, error) {
	now := m.cfg.Clock()
	ttl := m.cfg.TTL
	type victim struct {
		expect, fence, maxSeq uint64
		newest                time.Time
	}
	dead := map[string]*victim{}
	m.host.Lock()
	for _, ss := range m.cfg.Fold.Swept.Subjects {
		if ss.Gw == m.cfg.Gateway {
			continue
		}
		if b := m.cfg.Fold.Groups.Beats[ss.Gw]; b != nil && now.Sub(b.Until) < ttl {
			continue // alive, or not dead long enough
		}
		if m.wideOpen(ss.Gw) {
			continue // a wide transaction of it is undecided: the store aborts it first (Jobs.AbortDead)
		}
		v := dead[ss.Gw]
		if v == nil {
			v = &victim{}
			if f := m.cfg.Fold.Swept.Fences[ss.Gw]; f != nil {
				v.expect, v.fence = f.Last, f.Fence
			}
			dead[ss.Gw] = v
		}
		v.newest = later(v.newest, ss.Newest)
		v.maxSeq = max(v.maxSeq, ss.Seqs[len(ss.Seqs)-1])
	}
	m.host.Unlock()
	gws := make([]string, 0, len(dead))
	for gw := range dead {
		gws = append(gws, gw)
	}
	sort.Strings(gws)
	deleted := 0
	for _, gw := range gws {
		v := dead[gw]
		if now.Sub(v.newest) < ttl {
			continue // it staged a moment ago: its heartbeat may not be folded yet
		}
		fence := v.fence
		if fence <= v.maxSeq { // a fence after every chunk of it is there already (a sweep before a restart)
			// A link of its chain (jetstream/chain): none of its batches planned
			// before can land after it.
			msg := nats.NewMsg(m.cfg.Subjects.Chain(gw))
			msg.Header.Set(fold.HFence, m.cfg.Gateway)
			msg.Header.Set(fold.HPrev, strconv.FormatUint(v.expect, 10))
			jsext.Expect(msg, v.expect)
			rctx, cancel := m.request(ctx)
			seq, err := m.host.Publish(rctx, msg)
			cancel()
			if err != nil {
				if jsext.ErrorCode(err) == jsext.ErrCodeWrongLastSequence {
					continue // it committed meanwhile: alive after all; the next sweep looks again
				}
				return deleted, m.host.Unavailable(err)
			}
			rctx, cancel = m.request(ctx)
			err = m.host.WaitApplied(rctx, seq)
			cancel()
			if err != nil {
				return deleted, err
			}
			fence = seq
		}
		n, err := m.deleteUnreferenced(ctx, gw, fence)
		deleted += n
		if err != nil {
			return deleted, err
		}
	}
	return deleted, nil
}

// deleteUnreferenced deletes gateway gw's chunks stored before fence that
// no record references, a staging's subject at once when none of it is,
// and forgets them.
func (m *Maintenance) deleteUnreferenced(ctx context.Context, gw string, fence uint64) (int, error) {
	type job struct {
		subject string
		key     string
		seqs    []uint64 // to delete one by one; nil: the whole staging (a rollup)
		n       int
	}
	var jobs []job
	m.host.Lock()
	keys := make([]string, 0, len(m.cfg.Fold.Swept.Subjects))
	for key := range m.cfg.Fold.Swept.Subjects {
		keys = append(keys, key)
	}
	sort.Strings(keys)
	for _, key := range keys {
		ss := m.cfg.Fold.Swept.Subjects[key]
		if ss.Gw != gw {
			continue
		}
		var loose []uint64
		refs := false
		for _, seq := range ss.Seqs {
			switch {
			case seq >= fence:
			case m.cfg.Fold.Swept.Chunks[seq].Ref:
				refs = true
			default:
				loose = append(loose, seq)
			}
		}
		j := job{subject: m.cfg.Subjects.Staged(key), key: key, n: len(loose)}
		if refs {
			j.seqs = loose // a commit joined some of it: those stay
			if len(loose) == 0 {
				j.seqs = []uint64{}
			}
		}
		jobs = append(jobs, j)
	}
	m.host.Unlock()
	deleted := 0
	for _, j := range jobs {
		for _, seq := range j.seqs { // none when the marker's rollup deletes the whole staging
			rctx, cancel := m.request(ctx)
			err := m.host.DeleteMsg(rctx, seq)
			cancel()
			if err != nil {
				return deleted, m.host.Unavailable(err)
			}
		}
		deleted += j.n
		// Every gateway forgets what was deleted: a staging none of
		// which a record references goes whole (a rollup: a chunk that
		// landed late goes too, and the fence refuses its commit); of
		// one that is referenced in part, what came before the fence.
		if err := m.MarkGone(ctx, j.subject, fence, j.seqs == nil); err != nil {
			return deleted, err
		}
	}
	return deleted, nil
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
