package executor

import (
	"time"

	"topicgate/eval"
	"topicgate/planner/plantree"
	"topicgate/sql/values"
)

// evalCtx implements eval.Env: what evaluating an expression and a
// builtin read of the statement and its session.
var _ eval.Env = (*evalCtx)(nil)

func (ec *evalCtx) Now() time.Time { return ec.now }

func (ec *evalCtx) Location() *time.Location { return ec.sess.settings.loc }

func (ec *evalCtx) DateStyle() values.DateStyle {
	if ec.sess == nil {
		return values.DateStyle{}
	}
	return ec.sess.settings.dateStyle
}

func (ec *evalCtx) Params() []any { return ec.params }

func (ec *evalCtx) Outer() eval.Row { return ec.outer }

func (ec *evalCtx) Subquery(x *plantree.SubqueryExpr, r eval.Row) (any, error) {
	return ec.evalSubquery(x, r)
}

func (ec *evalCtx) SRFValue(f *plantree.FuncExpr) (any, error) { return ec.srfValue(f) }

func (ec *evalCtx) Session() eval.Session {
	i := ec.sess.info
	return eval.Session{Database: i.Database, User: i.User, ProcessID: i.ProcessID, ServerVersion: Version}
}

func (ec *evalCtx) Setting(name string) (string, bool) { return ec.sess.settings.get(name) }

func (ec *evalCtx) SetSetting(name, value string, local bool) (string, error) {
	if err := ec.sess.settings.set(name, value, local); err != nil {
		return "", err
	}
	v, _ := ec.sess.settings.get(paramName(name))
	return v, nil
}

func (ec *evalCtx) Catalog() eval.Catalog { return ec.sess }

// Relation implements eval.Catalog.
func (s *Session) Relation(oid int64) (eval.Relation, bool) {
	r, ok := s.relOf(oid)
	if !ok {
		return eval.Relation{}, false
	}
	return eval.Relation{Name: r.name, Namespace: r.ns, Kind: r.kind, Bytes: r.bytes, Columns: r.names}, true
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
