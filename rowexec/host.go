package rowexec

import (
	"context"
	"time"

	"topicgate/eval"
	"topicgate/planner/plantree"
	"topicgate/sql/values"
	"topicgate/topicstore"
	"topicgate/wire"
)

// Host is what running a plan's rows asks of the session running the
// statement (the executor implements it): the store, the statement's
// memory limit, the read counters, the nodes only the session can open
// and what evaluating an expression reads of the session (eval.Env's
// session part).
type Host interface {
	// Store is the store topic scans read.
	Store() topicstore.Store
	// MaxQueryBytes is the statement's memory budget (--max-query-mib;
	// 0 or less: none).
	MaxQueryBytes() int64
	// NoteRead counts n messages of nbytes read from topic by a scan.
	NoteRead(topic string, n, nbytes int64)
	// Open opens the nodes only the session can: a read as a consumer
	// (plantree.ConsumerReadNode, passed direct) and a system or
	// pg_catalog view (plantree.SysScanNode, which takes the statement's
	// read point first: EvalCtx.TakeReadPoint).
	Open(ctx context.Context, ec *EvalCtx, n plantree.Node, direct func() *wire.RowEncoder) (Iter, error)
	// The rest is what eval.Env and eval.Context read of the session.
	Location() *time.Location
	DateStyle() values.DateStyle
	Session() eval.Session
	Setting(name string) (string, bool)
	SetSetting(name, value string, local bool) (string, error)
	Catalog() eval.Catalog
}
