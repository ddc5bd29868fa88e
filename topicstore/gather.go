package topicstore

import "context"

// Gatherer is implemented by a store that several gateways share (the
// JetStream store): a gateway asks every live gateway of the store a
// question only that gateway can answer (its SQL sessions and open
// transactions, for sys.sessions) and gathers the answers, as
// CockroachDB's cluster-wide session views fan out to every node. The
// store carries questions and answers as opaque bytes; what they mean is
// its caller's (the executor's). It is optional, like GroupCoordinator:
// on the embedded store one process holds every session.
type Gatherer interface {
	// Serve makes fn this gateway's answer to questions of kind, for the
	// store's life. fn runs on the store's goroutines: it must be quick
	// and must not call back into the store.
	Serve(kind string, fn func() []byte) error
	// Gather asks every live gateway, this one included, and returns one
	// answer per gateway that answered, this gateway's first. A gateway
	// that is alive by the store's reckoning but does not answer within
	// the store's timeout (capped by ctx) is named in Missing.
	Gather(ctx context.Context, kind string) (Gathered, error)
	// Tell sends data to every gateway's listener of kind (this one's
	// too), at most once and without an answer; Hear sets this gateway's
	// listener of kind for the store's life. A cancel that reached the
	// wrong gateway travels this way.
	Tell(kind string, data []byte) error
	Hear(kind string, fn func(data []byte)) error
}

// Gathered is what Gather collected.
type Gathered struct {
	Answers []GatewayAnswer
	Missing []string // gateway ids
}

// GatewayAnswer is one gateway's answer.
type GatewayAnswer struct {
	Gateway string // its GroupCoordinator.GatewayID
	Data    []byte
}
