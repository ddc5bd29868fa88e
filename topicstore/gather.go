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
	// Ask sends data to gateway gw's Answer of kind and returns its reply
	// (a request that only that gateway can act on: the Kafka door's
	// group coordinator). It fails with ErrUnavailable when gw does not
	// answer within ctx (it is gone, or answers no such kind).
	Ask(ctx context.Context, gw, kind string, data []byte) ([]byte, error)
	// Answer makes fn this gateway's answer to Asks of kind, for the
	// store's life. Each Ask runs fn on a goroutine of its own, which may
	// wait (up to the context's deadline, the asker's) but must not call
	// back into the store's Answer.
	Answer(kind string, fn func(ctx context.Context, data []byte) []byte) error
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
