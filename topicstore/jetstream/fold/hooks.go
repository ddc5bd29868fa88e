package fold

import "github.com/nats-io/nats.go"

// Hooks is what the fold tells its owner, a gateway, as it applies a
// message: what decides the gateway's own batches in doubt, wide
// transactions and snapshots, what empties its caches, and what an
// operator should hear of. Each runs inside Apply, so under the owner's
// lock, and none may change the State.
type Hooks interface {
	// Witnessed: a record batch or shared-consumer state at seq, which
	// may witness a batch of the gateway in doubt (jetstream/chain).
	Witnessed(subject string, h nats.Header, seq uint64)
	// Linked: a link of gateway gw's chain at seq, whose last link the
	// fold held before was at before (jetstream/chain).
	Linked(gw string, before uint64, h nats.Header, seq uint64)
	// Decided: gateway gw's wide transaction n was decided
	// (jetstream/wide).
	Decided(gw string, n uint64, commit bool)
	// RetiredLate: a wide transaction's decision was retired before the
	// fold applied it, deciding the intents it held
	// (jetstream/wide).
	RetiredLate(gw string, n uint64, intents int)
	// SnapPoint: a snapshot point at seq, published by holder; digest
	// is the fold's there (jetstream/snapshot).
	SnapPoint(seq uint64, holder string, digest uint64)
	// SnapMismatch: the notice of the snapshot at at, whose writer's
	// digest, want, is not the fold's there, digest.
	SnapMismatch(at, digest, want uint64)
	// SharedCASBroken: a shared-consumer state stored over one it did
	// not expect.
	SharedCASBroken(subject string, seq, expected, folded uint64)
	// SharedReset: topic id's shared consumer name starts a new
	// generation, or is shared no more (jetstream/plan.SharedCaches.Reset).
	SharedReset(id uint64, name string)
	// SharedGone: topic id, which had shared consumers, was dropped.
	SharedGone(id uint64)
}

// noHooks is a fold's hooks that do nothing.
type noHooks struct{}

func (noHooks) Witnessed(string, nats.Header, uint64) {}

func (noHooks) Linked(string, uint64, nats.Header, uint64) {}

func (noHooks) Decided(string, uint64, bool) {}

func (noHooks) RetiredLate(string, uint64, int) {}

func (noHooks) SnapPoint(uint64, string, uint64) {}

func (noHooks) SnapMismatch(uint64, uint64, uint64) {}

func (noHooks) SharedReset(uint64, string) {}

func (noHooks) SharedGone(uint64) {}

func (noHooks) SharedCASBroken(string, uint64, uint64, uint64) {}
