package executor

import (
	"context"
	"time"

	"topicgate/eval"
	"topicgate/executor/internal/settings"
	"topicgate/pgcatalog"
	"topicgate/planner/plantree"
	"topicgate/rowexec"
	"topicgate/sql/pgerror"
	"topicgate/sql/values"
	"topicgate/topicstore"
	"topicgate/wire"
)

// sessionHost is the session as its statements' row host.
type sessionHost struct{ s *Session }

var _ rowexec.Host = sessionHost{}

func (h sessionHost) Store() topicstore.Store { return h.s.eng.store }

func (h sessionHost) MaxQueryBytes() int64 { return h.s.eng.opts.MaxQueryBytes }

func (h sessionHost) NoteRead(topic string, n, nbytes int64) {
	h.s.eng.metrics.NoteRead(topic, n, nbytes)
}

// Open opens the nodes only the session can: a read as a consumer and a
// system view.
func (h sessionHost) Open(ctx context.Context, ec *rowexec.EvalCtx, n plantree.Node, direct func() *wire.RowEncoder) (rowexec.Iter, error) {
	s := h.s
	switch x := n.(type) {
	case *plantree.ConsumerReadNode:
		return s.rd.Open(ctx, ec, x, direct)
	case *plantree.SysScanNode:
		if err := ec.TakeReadPoint(); err != nil { // the views show topic state too
			return nil, err
		}
		rows, err := s.sysRows(x.Sys.View)
		if err != nil {
			return nil, err
		}
		return rowexec.Rows(rows), nil
	}
	return nil, pgerror.AssertionFailed("the session opens no plan node %T", n)
}

func (h sessionHost) Location() *time.Location { return h.s.settings.Location() }

func (h sessionHost) DateStyle() values.DateStyle { return h.s.settings.DateStyle() }

func (h sessionHost) Session() eval.Session {
	i := h.s.info
	return eval.Session{Database: i.Database, User: h.s.id.Current, SessionUser: h.s.id.Session, ProcessID: i.ProcessID, ServerVersion: Version}
}

func (h sessionHost) Setting(name string) (string, bool) { return h.s.settings.Get(name) }

func (h sessionHost) SetSetting(name, value string, local bool) (string, error) {
	if err := h.s.settings.Set(name, value, local); err != nil {
		return "", err
	}
	v, _ := h.s.settings.Get(settings.Name(name))
	return v, nil
}

func (h sessionHost) Catalog() eval.Catalog { return h.s }

// Relation implements eval.Catalog.
func (s *Session) Relation(oid int64) (eval.Relation, bool) {
	return pgcatalog.Relation(s.eng.store.Topics(), oid)
}

// DatabaseSize implements eval.Catalog.
func (s *Session) DatabaseSize() int64 {
	var n int64
	if s.eng == nil {
		return n
	}
	for _, t := range s.eng.store.Topics() {
		for _, p := range t.Partitions {
			n += p.Bytes
		}
	}
	return n
}
