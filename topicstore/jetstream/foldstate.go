package jetstream

// foldState is the state the stream's messages fold into (fold.go), under
// the Store's mu.
type foldState struct {
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

func newFoldState() *foldState {
	return &foldState{byName: map[string]*topicState{}, byID: map[uint64]*topicState{},
		catSeqs: map[string]uint64{}, leftovers: map[uint64]*leftover{}}
}
