package planner

import (
	"errors"

	"topicgate/planner/plantree"
	"topicgate/sql"
	"topicgate/sql/pgerror"
)

// Lateral references. A function in FROM (and a LATERAL subquery) may name
// the columns of the FROM items to its left, as in PostgreSQL:
// `FROM t, jsonb_each_text(t.attrs) a`. The right side of such a join is
// planned with the left side's scope as the scope around it, so those
// names bind as OuterRefs below the left's width; in a subquery of an
// expression, the names of the query around that subquery follow, as
// OuterRefs past the left's columns. A right side that reads the left
// makes the join lateral (JoinPlan.Lateral): the executor runs it again
// for each left row, with that row (then the row around) as its outer row.

// lateralOuterRef resolves x for s, whose Outer o is the left side of a
// lateral join and lacks x, in the scopes around o (o.Outer, and past a lateral one its
// Outer, as for a lateral item inside a LATERAL subquery): ok false if it
// is in none. Each level's outerUse records the column in its own
// numbering (its Outer's columns, then the next level's).
func (s *Scope) lateralOuterRef(o *Scope, x *sql.ColumnRef) (plantree.Expr, bool, error) {
	type level struct {
		use *outerUse
		off int
	}
	levels := []level{{s.outerUse, len(o.Names)}}
	for u, up := o.outerUse, o.Outer; up != nil; u, up = up.outerUse, up.Outer {
		levels = append(levels, level{u, 0})
		i, err := up.resolveRef(x.Table, x.Name)
		if err == nil {
			for _, l := range levels {
				l.use.add(l.off + i)
			}
			return &plantree.OuterRef{Idx: levels[0].off + i, T: up.Types[i], Name: up.Names[i]}, true, nil
		}
		var pe *pgerror.Error
		if !errors.As(err, &pe) || pe.Code != pgerror.CodeUndefinedColumn {
			return nil, false, err
		}
		if !up.lateral {
			break
		}
		for k := range levels {
			levels[k].off += len(up.Names)
		}
	}
	return nil, false, nil
}

func (u *outerUse) add(col int) {
	if u == nil {
		return
	}
	if u.cols == nil {
		u.cols = map[int]bool{}
	}
	u.cols[col] = true
}

// planRight plans the right side of join j, whose left side is l: as a
// lateral item when it may be one (a function, a LATERAL subquery, a join
// that may hold them) and reads l's columns (lateral true), else as an
// input of its own.
func planRight(cat Catalog, j *sql.Join, params *[]Type, where []sql.Expr, l relation, outer *Scope, use *outerUse) (relation, bool, error) {
	if j.Right.Func != nil || j.Right.Sub != nil && j.Right.Lateral || j.Right.Join != nil {
		var lu outerUse
		ls := l.scope.withOuter(outer, use, "")
		ls.lateral = true
		r, err := planRelation(cat, &j.Right, params, where, ls, &lu)
		if err != nil {
			return relation{}, false, err
		}
		for c := range lu.cols {
			if c < len(l.scope.Names) {
				if lu.volatile && use != nil {
					use.volatile = true
				}
				return r, true, nil
			}
		}
	}
	r, err := planRelation(cat, &j.Right, params, where, outer, use)
	return r, false, err
}
