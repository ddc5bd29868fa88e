package planner

import (
	"topicgate/planner/plantree"
	"topicgate/sql"
	"topicgate/sql/pgerror"
)

func planDeclareCursor(cat Catalog, s *sql.DeclareCursor, params *[]Type) (plantree.Plan, error) {
	switch {
	case s.Binary:
		return nil, pgerror.New(pgerror.CodeFeatureNotSupported,
			"BINARY cursors are not supported; FETCH with the extended protocol and binary result formats instead")
	case s.Scroll:
		return nil, pgerror.New(pgerror.CodeFeatureNotSupported, "SCROLL cursors are not supported; cursors only scan forward")
	}
	q, err := planSelect(cat, s.Query, params)
	if err != nil {
		return nil, err
	}
	if c := consumerRead(q); c != nil {
		return nil, pgerror.Newf(pgerror.CodeFeatureNotSupported,
			"a read as consumer \"%s\" in a cursor is not supported: a cursor reads statelessly; "+
				"read as the consumer with SELECT ... WITH (CONSUMER = %s) LIMIT n", c.Consumer, c.Consumer)
	}
	return &plantree.DeclareCursorPlan{Name: s.Name, Hold: s.Hold, Query: q}, nil
}

// consumerRead finds a read as a consumer anywhere in p's inputs.
func consumerRead(p *plantree.SelectPlan) *plantree.ConsumerRead {
	if p == nil {
		return nil
	}
	if p.Consumer != nil {
		return p.Consumer
	}
	var in []*plantree.SelectPlan
	in = append(in, p.Sub)
	if p.SetOp != nil {
		in = append(in, p.SetOp.Left, p.SetOp.Right)
	}
	if p.Join != nil {
		in = append(in, p.Join.Left, p.Join.Right)
	}
	if p.Recursive != nil {
		in = append(in, p.Recursive.NonRec, p.Recursive.Rec)
	}
	for _, q := range in {
		if c := consumerRead(q); c != nil {
			return c
		}
	}
	return nil
}
