package planner

import (
	"topicgate/planner/catalog"
	"topicgate/sql"
	"topicgate/sql/pgerror"
)

// SetPositionPlan is UPDATE sys.consumers SET committed_offset = v WHERE
// ...: it moves the committed offset of every (topic, consumer, partition)
// row the filter selects.
type SetPositionPlan struct {
	Filter Expr // over sys.consumers columns; nil = every row
	Offset Expr // may use the row's columns, e.g. end_offset
}

// Columns implements Plan.
func (p *SetPositionPlan) Columns() []Column { return nil }

func planSetPosition(s *sql.Update, params *[]Type) (Plan, error) {
	view := catalog.SysViews["consumers"]
	scope := &Scope{Names: view.Names, Types: view.Types, Source: "sys.consumers"}
	b := newBinder(params, scope)
	if len(s.Set) != 1 || s.Set[0].Column != "committed_offset" {
		return nil, pgerror.New(pgerror.CodeFeatureNotSupported, "only committed_offset of sys.consumers can be updated")
	}
	p := &SetPositionPlan{}
	var err error
	if p.Offset, err = b.bind(s.Set[0].Value, TInt8); err != nil {
		return nil, err
	}
	if !p.Offset.Type().IsInt() {
		return nil, pgerror.Newf(pgerror.CodeDatatypeMismatch, "committed_offset must be an integer, not %s", p.Offset.Type())
	}
	if s.Where != nil {
		if p.Filter, err = b.bind(s.Where, TBool); err != nil {
			return nil, err
		}
		if err := wantType(p.Filter, TBool, "argument of WHERE"); err != nil {
			return nil, err
		}
	}
	return p, nil
}
