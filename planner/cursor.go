package planner

import (
	"topicgate/sql"
	"topicgate/sql/pgerror"
)

// DeclareCursorPlan is DECLARE name CURSOR [WITH HOLD] FOR query: a
// stateless read (a topic, a system view, VALUES, ...) whose rows FETCH
// hands out. A read as a consumer moves positions and holds partitions,
// which a cursor left open across statements must not do: 0A000.
type DeclareCursorPlan struct {
	Name  string
	Hold  bool
	Query *SelectPlan
}

// FetchPlan is FETCH or MOVE on a cursor of the session. Its columns are
// the cursor's, which only the session knows (Cols is nil here).
type FetchPlan struct {
	Fetch sql.Fetch
	Cols  []Column
}

// CloseCursorPlan is CLOSE name or CLOSE ALL.
type CloseCursorPlan struct{ Close sql.CloseCursor }

func (p *DeclareCursorPlan) Columns() []Column { return nil }
func (p *FetchPlan) Columns() []Column         { return p.Cols }
func (p *CloseCursorPlan) Columns() []Column   { return nil }

func planDeclareCursor(cat Catalog, s *sql.DeclareCursor, params *[]Type) (Plan, error) {
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
	return &DeclareCursorPlan{Name: s.Name, Hold: s.Hold, Query: q}, nil
}

// consumerRead finds a read as a consumer anywhere in p's inputs.
func consumerRead(p *SelectPlan) *ConsumerRead {
	if p == nil {
		return nil
	}
	if p.Consumer != nil {
		return p.Consumer
	}
	var in []*SelectPlan
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
