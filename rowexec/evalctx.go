package rowexec

import (
	"time"

	"topicgate/eval"
	"topicgate/planner/plantree"
	"topicgate/sql/values"
)

// EvalCtx implements eval.Env: what evaluating an expression and a
// builtin read of the statement and its session.
var _ eval.Env = (*EvalCtx)(nil)

func (ec *EvalCtx) Now() time.Time { return ec.now }

func (ec *EvalCtx) Location() *time.Location { return ec.host.Location() }

func (ec *EvalCtx) DateStyle() values.DateStyle {
	if ec.host == nil {
		return values.DateStyle{}
	}
	return ec.host.DateStyle()
}

func (ec *EvalCtx) Params() []any { return ec.params }

func (ec *EvalCtx) Outer() eval.Row { return ec.outer }

func (ec *EvalCtx) Subquery(x *plantree.SubqueryExpr, r eval.Row) (any, error) {
	return ec.evalSubquery(x, r)
}

func (ec *EvalCtx) SRFValue(f *plantree.FuncExpr) (any, error) { return ec.srfValue(f) }

func (ec *EvalCtx) Session() eval.Session { return ec.host.Session() }

func (ec *EvalCtx) Setting(name string) (string, bool) { return ec.host.Setting(name) }

func (ec *EvalCtx) SetSetting(name, value string, local bool) (string, error) {
	return ec.host.SetSetting(name, value, local)
}

func (ec *EvalCtx) Catalog() eval.Catalog { return ec.host.Catalog() }
