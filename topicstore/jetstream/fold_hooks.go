package jetstream

import (
	"log/slog"

	"github.com/nats-io/nats.go"
)

// foldHooks is what the fold tells this gateway as it applies a message
// (Hooks): each hook runs under s.mu, from the fold.
type foldHooks struct{ s *Store }

// Witnessed decides the doubts watching subject by the message at seq
// (jetstream/chain: State.Witnessed) and wakes their waiters.
func (h foldHooks) Witnessed(subject string, hd nats.Header, seq uint64) {
	if h.s.chain.Witnessed(h.s.stage.gw, subject, hd, seq) {
		h.s.cond.Broadcast()
	}
}

// Linked decides this gateway's doubts by a link of its chain at seq,
// whose predecessor the fold held before was at before (jetstream/chain:
// State.Linked), and wakes their waiters.
func (h foldHooks) Linked(gw string, before uint64, hd nats.Header, seq uint64) {
	if gw != h.s.stage.gw {
		return
	}
	h.s.chain.Linked(before, hd, seq)
	h.s.cond.Broadcast()
}

// Decided marks this gateway's wide transaction n decided
// (jetstream/wide) and wakes the waiters of any gateway's.
func (h foldHooks) Decided(gw string, n uint64, commit bool) {
	h.s.wide.Decided(gw, n, commit)
	h.s.cond.Broadcast()
}

func (h foldHooks) RetiredLate(gw string, n uint64, intents int) {
	h.s.wide.RetiredLate(gw, n, intents)
}

func (h foldHooks) SnapPoint(seq uint64, holder string, digest uint64) {
	h.s.snap.Point(seq, holder, digest)
}

func (h foldHooks) SnapMismatch(at, digest, want uint64) { h.s.snap.Mismatch(at, digest, want) }

func (h foldHooks) SharedReset(id uint64, name string) { h.s.shc.Reset(id, name) }

func (h foldHooks) SharedGone(id uint64) { h.s.shc.Gone(id) }

func (h foldHooks) SharedCASBroken(subject string, seq, expected, folded uint64) {
	h.s.sharedCASBroken(subject, seq, expected, folded)
}

// sharedCASBroken counts and reports a shared-consumer state the stream
// stored over one it did not expect (a fold hook).
func (s *Store) sharedCASBroken(subject string, seq, expected, folded uint64) {
	s.casBroken.Add(1)
	slog.Error("the stream stored a shared-consumer state over one it did not expect", "subject", subject,
		"seq", seq, "expected", expected, "folded", folded)
}
