package planner

import (
	"strings"

	"topicgate/planner/plantree"
	"topicgate/planner/topicopts"
	"topicgate/sql"
	"topicgate/sql/pgerror"
	"topicgate/topicstore"
)

func sharedTarget(cat Catalog, t sql.TableRef, params *[]Type, verb string) (*plantree.ConsumerRead, error) {
	ti, err := lookupTopic(cat, t.Name)
	if err != nil {
		return nil, err
	}
	if len(t.Hints) == 0 {
		if verb == "DELETE" {
			return nil, pgerror.Newf(pgerror.CodeFeatureNotSupported, "DELETE from topic \"%s\" is not supported: messages are removed by retention; to acknowledge messages of a shared consumer use DELETE FROM %s WITH (CONSUMER = name) WHERE partition = ... AND offset IN (...)", t.Name, t.Name)
		}
		return nil, pgerror.Newf(pgerror.CodeFeatureNotSupported, "UPDATE of topic \"%s\" is not supported: messages are immutable; to release, reject or extend messages of a shared consumer use UPDATE %s WITH (CONSUMER = name) SET ... WHERE ...", t.Name, t.Name)
	}
	cr, err := planConsumerRead(newBinder(params, nil, nil), ti, t.Hints)
	if err != nil {
		return nil, err
	}
	if !cr.Shared {
		return nil, pgerror.Newf(pgerror.CodeInvalidParameterValue, "%s ... WITH (CONSUMER = %s): consumer \"%s\" is a streaming consumer; acknowledgements are for shared consumers (streaming consumers commit positions by reading)", verb, cr.Consumer, cr.Consumer)
	}
	if cr.Wait != nil || cr.MaxBytes != nil || cr.ReadFrom != nil || cr.MaxLag != nil || cr.Partitions != nil || cr.MaxInFlight != nil || cr.ProcessingTimeout != nil {
		return nil, topicopts.BadOption("%s on a shared consumer takes only CONSUMER = name", verb)
	}
	return cr, nil
}

func planSharedDelete(cat Catalog, s *sql.Delete, params *[]Type) (plantree.Plan, error) {
	cr, err := sharedTarget(cat, s.Table, params, "DELETE")
	if err != nil {
		return nil, err
	}
	p := &plantree.SharedActionPlan{Topic: cr.Topic, Consumer: cr.Consumer, Action: topicstore.ActionAck}
	if p.Refs, err = extractRefs(s.Where, params, cr.Topic); err != nil {
		return nil, err
	}
	return p, nil
}

func planSharedUpdate(cat Catalog, s *sql.Update, params *[]Type) (plantree.Plan, error) {
	cr, err := sharedTarget(cat, s.Table, params, "UPDATE")
	if err != nil {
		return nil, err
	}
	p := &plantree.SharedActionPlan{Topic: cr.Topic, Consumer: cr.Consumer}
	usage := pgerror.New(pgerror.CodeFeatureNotSupported,
		"UPDATE on a shared consumer takes one of: SET locked_until = NULL (release), SET locked_until = <timestamptz> (extend), SET state = 'released' | 'rejected'")
	if len(s.Set) != 1 {
		return nil, usage
	}
	set := s.Set[0]
	b := newBinder(params, nil, nil)
	switch set.Column {
	case "locked_until":
		if c, ok := set.Value.(*sql.Const); ok && c.Lit.Kind == sql.LitNull {
			p.Action = topicstore.ActionRelease
			break
		}
		p.Action = topicstore.ActionExtend
		if p.Until, err = b.Bind(set.Value, TTimestamptz); err != nil {
			return nil, err
		}
		if p.Until.Type() != TTimestamptz {
			return nil, pgerror.Newf(pgerror.CodeDatatypeMismatch, "locked_until must be a timestamptz, not %s", p.Until.Type())
		}
	case "state":
		c, ok := set.Value.(*sql.Const)
		if !ok || c.Lit.Kind != sql.LitString {
			return nil, usage
		}
		switch strings.ToLower(c.Lit.Str) {
		case "released", "available":
			p.Action = topicstore.ActionRelease
		case "rejected", "archived":
			p.Action = topicstore.ActionReject
		default:
			return nil, pgerror.Newf(pgerror.CodeInvalidParameterValue, "state '%s' is not one of 'released', 'rejected'", c.Lit.Str)
		}
	default:
		return nil, usage
	}
	if p.Refs, err = extractRefs(s.Where, params, cr.Topic); err != nil {
		return nil, err
	}
	return p, nil
}

// extractRefs turns WHERE partition = p AND offset IN (...) [OR ...] into
// reference groups; any other shape is refused, so an acknowledgement can
// never match more than the client named.
func extractRefs(where sql.Expr, params *[]Type, topic string) ([]plantree.RefGroup, error) {
	bad := pgerror.New(pgerror.CodeFeatureNotSupported,
		"name the messages as WHERE partition = <p> AND offset IN (...) | offset = <o> | offset = ANY(<int8[]>), optionally OR-ed")
	if where == nil {
		return nil, bad
	}
	b := newBinder(params, msgScope(topic), nil)
	e, err := b.Bind(where, TBool)
	if err != nil {
		return nil, err
	}
	var groups []plantree.RefGroup
	var disj func(e plantree.Expr) error
	disj = func(e plantree.Expr) error {
		if l, ok := e.(*plantree.LogicExpr); ok && !l.And {
			for _, a := range l.Args {
				if err := disj(a); err != nil {
					return err
				}
			}
			return nil
		}
		var g plantree.RefGroup
		for _, c := range plantree.Conjuncts(e, nil) {
			switch x := c.(type) {
			case *plantree.CmpExpr:
				col, ok := x.L.(*plantree.ColExpr)
				if !ok || x.Op != "=" || !plantree.IsConstant(x.R) {
					return bad
				}
				switch plantree.MsgCol(col.Idx) {
				case plantree.ColPartition:
					g.Partition = x.R
				case plantree.ColOffset:
					g.Offsets = append(g.Offsets, x.R)
				default:
					return bad
				}
			case *plantree.InExpr:
				col, ok := x.X.(*plantree.ColExpr)
				if !ok || x.Not || plantree.MsgCol(col.Idx) != plantree.ColOffset {
					return bad
				}
				g.Offsets = append(g.Offsets, x.List...)
			case *plantree.AnyExpr:
				col, ok := x.X.(*plantree.ColExpr)
				if !ok || x.All || x.Op != "=" || plantree.MsgCol(col.Idx) != plantree.ColOffset || !plantree.IsConstant(x.Array) {
					return bad
				}
				g.OffsetArray = x.Array
			default:
				return bad
			}
		}
		if g.Partition == nil || (g.Offsets == nil && g.OffsetArray == nil) {
			return bad
		}
		groups = append(groups, g)
		return nil
	}
	if err := disj(e); err != nil {
		return nil, err
	}
	return groups, nil
}
