package executor

import (
	"time"

	"topicgate/eval"
	"topicgate/planner"
	"topicgate/sql/pgerror"
)

// evalCtx implements eval.Context: what a builtin reads of the statement
// and its session.
var _ eval.Context = (*evalCtx)(nil)

func (ec *evalCtx) Now() time.Time { return ec.now }

func (ec *evalCtx) Location() *time.Location { return ec.sess.settings.loc }

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

// evalFunc evaluates a builtin's arguments and calls it (eval.Call); a
// NULL argument makes the result NULL unless the builtin is NullAware.
func (ec *evalCtx) evalFunc(x *planner.FuncExpr, r row) (any, error) {
	if x.Fn == nil {
		return nil, pgerror.AssertionFailed("builtin %s was planned without its declaration", x.Name)
	}
	var buf [4]any
	args := buf[:0]
	for _, a := range x.Args {
		v, err := ec.eval(a, r)
		if err != nil {
			return nil, err
		}
		if v == nil && !x.Fn.NullAware {
			return nil, nil
		}
		args = append(args, v)
	}
	return eval.Call(ec, x, args)
}
