package planner

import (
	"topicgate/planner/catalog"
	"topicgate/planner/plantree"
	"topicgate/planner/scalar"
	"topicgate/sql"
	"topicgate/sql/pgerror"
)

func planSetPosition(s *sql.Update, params *[]Type) (plantree.Plan, error) {
	view := catalog.SysViews["consumers"]
	scope := &Scope{Names: view.Names, Types: view.Types, Source: "sys.consumers"}
	b := newBinder(params, scope, nil)
	if len(s.Set) != 1 || s.Set[0].Column != "committed_offset" {
		return nil, pgerror.New(pgerror.CodeFeatureNotSupported, "only committed_offset of sys.consumers can be updated")
	}
	p := &plantree.SetPositionPlan{}
	var err error
	if p.Offset, err = b.Bind(s.Set[0].Value, TInt8); err != nil {
		return nil, err
	}
	if !p.Offset.Type().IsInt() {
		return nil, pgerror.Newf(pgerror.CodeDatatypeMismatch, "committed_offset must be an integer, not %s", p.Offset.Type())
	}
	if s.Where != nil {
		if p.Filter, err = b.Bind(s.Where, TBool); err != nil {
			return nil, err
		}
		if err := scalar.WantType(p.Filter, TBool, "argument of WHERE"); err != nil {
			return nil, err
		}
	}
	return p, nil
}
