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

func (ec *evalCtx) Location() *time.Location { return ec.host.Location() }

func (ec *evalCtx) DateStyle() values.DateStyle {
	if ec.host == nil {
		return values.DateStyle{}
	}
	return ec.host.DateStyle()
}

func (ec *evalCtx) Params() []any { return ec.params }

func (ec *evalCtx) Outer() eval.Row { return ec.outer }

func (ec *evalCtx) Subquery(x *plantree.SubqueryExpr, r eval.Row) (any, error) {
	return ec.evalSubquery(x, r)
}

func (ec *evalCtx) SRFValue(f *plantree.FuncExpr) (any, error) { return ec.srfValue(f) }

func (ec *evalCtx) Session() eval.Session { return ec.host.Session() }

func (ec *evalCtx) Setting(name string) (string, bool) { return ec.host.Setting(name) }

func (ec *evalCtx) SetSetting(name, value string, local bool) (string, error) {
	return ec.host.SetSetting(name, value, local)
}

func (ec *evalCtx) Catalog() eval.Catalog { return ec.host.Catalog() }
