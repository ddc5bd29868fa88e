package jetstream

import (
	"time"

	"github.com/nats-io/nats.go"
)

// foldState is the state the stream's messages fold into (fold.go), under
// the Store's mu.
type foldState struct {
	prefix  string           // the stream's subject prefix
	clock   func() time.Time // the time a message without one is folded at (Options.Clock)
	hooks   foldHooks        // what the gateway does besides (nil: nothing)
	byName  map[string]*topicState
	byID    map[uint64]*topicState
	catSeqs map[string]uint64 // each catalog subject's last sequence, drops included
	// leftovers are dropped topics whose messages or tombstone may not
	// all be purged yet (catalog.go, purgeLeftovers), by topic ID.
	leftovers map[uint64]*leftover
	created   uint64     // the highest topic number given out (TopicInfo.ID)
	cnSeq     uint64     // the topic-number subject's last sequence (catalog.go)
	lease     leaseState // the maintenance lease, as folded
	swept     sweptState // staged chunks and fences, as folded (sweep.go)
	wide      wideState  // wide transactions, as folded (wide.go)
	sh        sharedFold // shared consumers: their part of the fold (shared_fold.go)
	snap      snapState  // snapshots, as folded (snapshot.go)
	members   groupsFold // read-session groups, as folded (groups.go)
}

func newFoldState(prefix string, clock func() time.Time, hooks foldHooks) *foldState {
	if hooks == nil {
		hooks = noHooks{}
	}
	return &foldState{prefix: prefix, clock: clock, hooks: hooks, byName: map[string]*topicState{}, byID: map[uint64]*topicState{},
		catSeqs: map[string]uint64{}, leftovers: map[uint64]*leftover{}}
}

// foldHooks is what the fold tells the gateway whose state it is, as it
// applies a message: what decides this gateway's own batches in doubt,
// wide transactions and snapshots, and what an operator should hear of.
// Each runs under the Store's mu, and none changes the fold's state.
type foldHooks interface {
	// witnessed: a record batch or shared-consumer state at seq, which
	// may witness a batch of this gateway in doubt (chain.go).
	witnessed(subject string, h nats.Header, seq uint64)
	// linked: a link of gateway gw's chain at seq, whose last link the
	// fold held before was at before (chain.go).
	linked(gw string, before uint64, h nats.Header, seq uint64)
	// decided: gateway gw's wide transaction n was decided (wide.go).
	decided(gw string, n uint64, commit bool)
	// retiredLate: a wide transaction's decision was retired before the
	// fold applied it, deciding intents it held (wide_retire.go).
	retiredLate(gw string, n uint64, intents int)
	// snapPoint: a snapshot point at seq, published by holder; digest
	// is the fold's there (snapshot.go).
	snapPoint(seq uint64, holder string, digest uint64)
	// snapMismatch: the notice of the snapshot at at, whose writer's
	// digest, want, is not the fold's there, digest (snapshot.go).
	snapMismatch(at, digest, want uint64)
	// sharedCASBroken: a shared-consumer state stored over one it did not
	// expect (shared_fold.go).
	sharedCASBroken(subject string, seq, expected, folded uint64)
	// sharedReset: topic id's shared consumer name starts a new
	// generation, or is shared no more (shared_fold.go).
	sharedReset(id uint64, name string)
	// sharedGone: topic id, which had shared consumers, was dropped.
	sharedGone(id uint64)
}

// noHooks is a fold's hooks that do nothing.
type noHooks struct{}

func (noHooks) witnessed(string, nats.Header, uint64)          {}
func (noHooks) linked(string, uint64, nats.Header, uint64)     {}
func (noHooks) decided(string, uint64, bool)                   {}
func (noHooks) retiredLate(string, uint64, int)                {}
func (noHooks) snapPoint(uint64, string, uint64)               {}
func (noHooks) snapMismatch(uint64, uint64, uint64)            {}
func (noHooks) sharedReset(uint64, string)                     {}
func (noHooks) sharedGone(uint64)                              {}
func (noHooks) sharedCASBroken(string, uint64, uint64, uint64) {}
